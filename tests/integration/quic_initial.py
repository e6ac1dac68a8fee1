"""QUIC version 1 Initial packets for tests: a real client's first Initial
(captured from gtlsclient) protected again under another destination
connection ID, so a test can open many distinct connections that never
finish their handshakes, as a flood of Initials would (RFC 9001 5.2, 5.4).
"""

import socket
import subprocess

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDFExpand
from cryptography.hazmat.primitives import hmac

INITIAL_SALT_V1 = bytes.fromhex("38762cf7f55934b34d179ae6a4c80cadccbb7f0a")


def hkdf_extract(salt, ikm):
    h = hmac.HMAC(salt, hashes.SHA256())
    h.update(ikm)
    return h.finalize()


def expand_label(secret, label, length):
    full = b"tls13 " + label
    info = length.to_bytes(2, "big") + bytes([len(full)]) + full + b"\x00"
    return HKDFExpand(hashes.SHA256(), length, info).derive(secret)


def client_keys(dcid):
    secret = expand_label(hkdf_extract(INITIAL_SALT_V1, dcid), b"client in", 32)
    return (expand_label(secret, b"quic key", 16), expand_label(secret, b"quic iv", 12),
            expand_label(secret, b"quic hp", 16))


def read_varint(buf, pos):
    first = buf[pos]
    n = 1 << (first >> 6)
    value = first & 0x3F
    for b in buf[pos + 1:pos + n]:
        value = (value << 8) | b
    return value, pos + n


def hp_mask(hp_key, sample):
    enc = Cipher(algorithms.AES(hp_key), modes.ECB()).encryptor()
    return enc.update(sample) + enc.finalize()


def parse(datagram):
    """The first packet's parts: (dcid, header_without_pn, pn_offset, end)."""
    pos = 5
    dcid_len = datagram[pos]
    dcid = datagram[pos + 1:pos + 1 + dcid_len]
    pos += 1 + dcid_len
    pos += 1 + datagram[pos]  # SCID
    token_len, pos = read_varint(datagram, pos)
    pos += token_len
    length, pos = read_varint(datagram, pos)
    return dcid, pos, pos + length


def unprotect(datagram):
    """(first byte, packet number bytes, plaintext, pn_offset, end) of the first packet."""
    dcid, pn_offset, end = parse(datagram)
    key, iv, hp = client_keys(dcid)
    mask = hp_mask(hp, datagram[pn_offset + 4:pn_offset + 20])
    first = datagram[0] ^ (mask[0] & 0x0F)
    pn_len = (first & 0x03) + 1
    pn = bytes(b ^ m for b, m in zip(datagram[pn_offset:pn_offset + pn_len], mask[1:1 + pn_len]))
    header = bytes([first]) + datagram[1:pn_offset] + pn
    nonce = bytes(a ^ b for a, b in zip(iv, int.from_bytes(pn, "big").to_bytes(12, "big")))
    plaintext = AESGCM(key).decrypt(nonce, datagram[pn_offset + pn_len:end], header)
    return first, pn, plaintext, pn_offset, end


def with_dcid(datagram, new_dcid):
    """The first Initial of `datagram` protected again for `new_dcid`
    (the same length as the original's), padded as the original was."""
    first, pn, plaintext, pn_offset, end = unprotect(datagram)
    old_len = datagram[5]
    assert len(new_dcid) == old_len
    header = bytes([first]) + datagram[1:6] + new_dcid + datagram[6 + old_len:pn_offset] + pn
    key, iv, hp = client_keys(new_dcid)
    nonce = bytes(a ^ b for a, b in zip(iv, int.from_bytes(pn, "big").to_bytes(12, "big")))
    sealed = AESGCM(key).encrypt(nonce, plaintext, header)
    pn_len = len(pn)
    mask = hp_mask(hp, sealed[4 - pn_len:20 - pn_len])
    out = bytearray(header + sealed)
    out[0] ^= mask[0] & 0x0F
    for i in range(pn_len):
        out[pn_offset + i] ^= mask[1 + i]
    return bytes(out) + datagram[end:]


def capture_first_initial(server_name="a.test", port=443):
    """A real client's first datagram (its Initial with a ClientHello for
    `server_name`), caught on a UDP socket that never answers."""
    sink = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sink.bind(("127.0.0.1", 0))
    sink.settimeout(10)
    client = subprocess.Popen(["gtlsclient", "--no-quic-dump", "--no-http-dump", "--timeout=5s", "127.0.0.1",
                               str(sink.getsockname()[1]), f"https://{server_name}:{port}/"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        data, _ = sink.recvfrom(65535)
    finally:
        client.kill()
        client.wait()
        sink.close()
    return data
