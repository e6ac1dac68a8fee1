"""image_filter (nginx's ngx_http_image_filter_module): images resized,
cropped, rotated, measured and checked, from files and from an upstream,
read back with Pillow. The same tests run against Debian's nginx with
libnginx-mod-http-image-filter loaded."""

import io
import json
import os

import pytest

import harness
from echo_backend import AppBackend

Image = pytest.importorskip("PIL.Image")

MODULE = "/usr/lib/nginx/modules/ngx_http_image_filter_module.so"

pytestmark = pytest.mark.skipif(harness.IS_NGINX and not os.path.exists(MODULE),
                                reason="needs libnginx-mod-http-image-filter")


def image_bytes(fmt, size, color=(200, 30, 30), mode="RGB"):
    out = io.BytesIO()
    Image.new(mode, size, color).save(out, fmt)
    return out.getvalue()


@pytest.fixture
def www(tmp_path):
    root = tmp_path / "www"
    root.mkdir()
    (root / "wide.png").write_bytes(image_bytes("PNG", (400, 200)))
    (root / "small.png").write_bytes(image_bytes("PNG", (40, 20)))
    (root / "photo.jpg").write_bytes(image_bytes("JPEG", (300, 600)))
    (root / "anim.gif").write_bytes(image_bytes("GIF", (120, 60), mode="P", color=3))
    (root / "pic.webp").write_bytes(image_bytes("WEBP", (200, 100)))
    (root / "data.bin").write_bytes(image_bytes("PNG", (30, 10)))
    (root / "note.txt").write_text("not an image at all, just text\n")
    return root


def conf(root, locations, http=""):
    main = f"load_module {MODULE};" if harness.IS_NGINX else ""
    return harness.base_conf(main=main, http=f"""
    {http}
    server {{
        listen 127.0.0.1:@PORT@;
        root {root};
        {locations}
    }}""")


def picture(r):
    assert r.status == 200, (r.status, r.body[:200])
    assert int(r.header("Content-Length")) == len(r.body)
    return Image.open(io.BytesIO(r.body))


def test_resize_keeps_the_aspect_ratio(make_server, www):
    srv = make_server(conf(www, "location / { image_filter resize 100 100; }"))
    r = harness.http(srv.port, "/wide.png")
    img = picture(r)
    assert (img.format, img.size) == ("PNG", (100, 50))
    assert r.header("Content-Type") == "image/png"
    assert r.header("ETag").startswith("W/")  # the bytes changed
    assert r.header("Last-Modified")
    img = picture(harness.http(srv.port, "/photo.jpg"))
    assert (img.format, img.size) == ("JPEG", (50, 100))
    # A HEAD gets the head the GET gets.
    h = harness.http(srv.port, "/wide.png", method="HEAD")
    assert h.status == 200 and h.body == b""
    assert h.header("Content-Type") == "image/png" and h.header("Content-Length") == str(len(r.body))


def test_an_image_that_fits_goes_as_it_is(make_server, www):
    srv = make_server(conf(www, "location / { image_filter resize 100 100; }"))
    r = harness.http(srv.port, "/small.png")
    assert r.status == 200 and r.body == (www / "small.png").read_bytes()


def test_no_limit_on_one_side(make_server, www):
    srv = make_server(conf(www, "location / { image_filter resize 80 -; }"))
    assert picture(harness.http(srv.port, "/wide.png")).size == (80, 40)


def test_crop_fills_the_box(make_server, www):
    srv = make_server(conf(www, "location / { image_filter crop 100 100; }"))
    assert picture(harness.http(srv.port, "/wide.png")).size == (100, 100)
    assert picture(harness.http(srv.port, "/photo.jpg")).size == (100, 100)


def test_rotate_and_resize_with_rotate(make_server, www):
    srv = make_server(conf(www, """
        location /r/ { alias {root}/; image_filter rotate 90; }
        location /rr/ { alias {root}/; image_filter resize 100 100; image_filter rotate 270; }
    """.replace("{root}", str(www))))
    assert picture(harness.http(srv.port, "/r/small.png")).size == (20, 40)
    assert picture(harness.http(srv.port, "/rr/wide.png")).size == (50, 100)


def test_gif_and_webp(make_server, www):
    srv = make_server(conf(www, "location / { image_filter resize 60 60; }"))
    img = picture(harness.http(srv.port, "/anim.gif"))
    assert (img.format, img.size) == ("GIF", (60, 30))
    img = picture(harness.http(srv.port, "/pic.webp"))
    assert (img.format, img.size) == ("WEBP", (60, 30))


def test_size_answers_json(make_server, www):
    srv = make_server(conf(www, "location / { image_filter size; }"))
    r = harness.http(srv.port, "/photo.jpg")
    assert r.status == 200 and r.header("Content-Type") == "application/json"
    assert json.loads(r.body) == {"img": {"width": 300, "height": 600, "type": "jpeg"}}
    assert json.loads(harness.http(srv.port, "/anim.gif").body)["img"]["type"] == "gif"
    r = harness.http(srv.port, "/note.txt")
    assert r.status == 200 and json.loads(r.body) == {}


def test_test_passes_images_with_their_type(make_server, www):
    srv = make_server(conf(www, "location / { image_filter test; }"))
    r = harness.http(srv.port, "/data.bin")
    assert r.status == 200 and r.header("Content-Type") == "image/png"
    assert r.body == (www / "data.bin").read_bytes()
    assert harness.http(srv.port, "/note.txt").status == 415


def test_not_an_image_is_415(make_server, www):
    srv = make_server(conf(www, "location / { image_filter resize 10 10; }"))
    assert harness.http(srv.port, "/note.txt").status == 415
    # A missing file's 404 page is not an image either (nginx's known answer).
    assert harness.http(srv.port, "/missing.png").status == 415


def test_response_over_the_buffer_is_415(make_server, www):
    srv = make_server(conf(www, "location / { image_filter resize 10 10; image_filter_buffer 1k; }"))
    assert harness.http(srv.port, "/wide.png").status in (200, 415)  # a plain red PNG compresses well
    (www / "noise.png").write_bytes(image_bytes("PNG", (64, 64)) + os.urandom(4096))
    assert harness.http(srv.port, "/noise.png").status == 415
    harness.wait_until(lambda: "image filter: too big response" in srv.error_log_text(), 5, what="the log line")


def test_sizes_from_variables(make_server, www):
    srv = make_server(conf(www, "location / { image_filter resize $arg_w $arg_h; }"))
    assert picture(harness.http(srv.port, "/wide.png?w=50&h=50")).size == (50, 25)
    assert harness.http(srv.port, "/wide.png").status == 415  # no size
    assert harness.http(srv.port, "/wide.png?w=abc&h=5").status == 415


def test_jpeg_quality(make_server, www):
    srv = make_server(conf(www, """
        location /lo/ { alias {root}/; image_filter resize 200 200; image_filter_jpeg_quality 5; }
        location /hi/ { alias {root}/; image_filter resize 200 200; image_filter_jpeg_quality 95; }
    """.replace("{root}", str(www))))
    (www / "grad.jpg").write_bytes(gradient_jpeg())
    lo = harness.http(srv.port, "/lo/grad.jpg")
    hi = harness.http(srv.port, "/hi/grad.jpg")
    assert picture(lo).size == picture(hi).size == (200, 200)
    assert len(lo.body) < len(hi.body)


def gradient_jpeg():
    img = Image.new("RGB", (400, 400))
    img.putdata([(x % 256, y % 256, (x * y) % 256) for y in range(400) for x in range(400)])
    out = io.BytesIO()
    img.save(out, "JPEG", quality=95)
    return out.getvalue()


def test_image_from_an_upstream(make_server, www):
    png = image_bytes("PNG", (300, 150))
    app = AppBackend(lambda request: (200, [("Content-Type", "application/octet-stream")], png))
    try:
        srv = make_server(conf(www, f"""
            location / {{ proxy_pass http://127.0.0.1:{app.port}; image_filter resize 30 30; }}"""))
        r = harness.http(srv.port, "/thumb")
        img = picture(r)
        assert img.size == (30, 15) and r.header("Content-Type") == "image/png"
    finally:
        app.stop()


def test_no_ranges_of_a_filtered_image(make_server, www):
    srv = make_server(conf(www, "location / { image_filter resize 100 100; }"))
    r = harness.http(srv.port, "/wide.png", headers={"Range": "bytes=0-9"})
    assert picture(r).size == (100, 50)
    assert r.header("Accept-Ranges") is None


@pytest.mark.parametrize("line, message", [
    ("image_filter resize 0 10;", "invalid parameter \"0\""),
    ("image_filter rotate 45;", "invalid parameter \"45\""),
    ("image_filter scale 10 10;", "invalid parameter \"scale\""),
    ("image_filter_jpeg_quality 0;", "invalid value \"0\""),
])
def test_bad_lines_are_refused(tmp_path, line, message):
    main = f"load_module {MODULE};" if harness.IS_NGINX else ""
    harness.check_test_fails(tmp_path, harness.base_conf(main=main, http=f"""
        server {{ listen 127.0.0.1:1; location / {{ {line} }} }}
    """), message)
