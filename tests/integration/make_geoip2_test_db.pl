#!/usr/bin/perl
# Writes the small MaxMind DB (.mmdb) files test_geoip2.py reads, with
# Debian's libmaxmind-db-writer-perl: a few documentation networks (RFC
# 5737 and 3849) with a country named in two languages, a city with a
# double latitude, a uint32, a boolean and the other types the module
# prints, one IPv6 network. Nothing here is real geography.
#
#   make_geoip2_test_db.pl OUT.mmdb [VARIANT]
#
# VARIANT "2" moves 198.51.100.0/24 from Germany to Austria and sets
# another build time: the file auto_reload is to pick up.
use strict;
use utf8;
use warnings;

use Math::BigInt;
use MaxMind::DB::Writer::Tree;

my ($out, $variant) = @ARGV;
die "usage: $0 OUT.mmdb [VARIANT]\n" unless defined $out;
$variant //= '1';

my %types = (
    city                => 'map',
    continent           => 'map',
    country             => 'map',
    location            => 'map',
    names               => 'map',
    subdivisions        => ['array', 'map'],
    code                => 'utf8_string',
    iso_code            => 'utf8_string',
    en                  => 'utf8_string',
    de                  => 'utf8_string',
    latitude            => 'double',
    longitude           => 'double',
    accuracy_radius     => 'uint16',
    population          => 'uint32',
    big                 => 'uint64',
    huge                => 'uint128',
    offset              => 'int32',
    ratio               => 'float',
    is_in_european_union => 'boolean',
    raw                 => 'bytes',
);

my $tree = MaxMind::DB::Writer::Tree->new(
    ip_version               => 6,
    record_size              => 28,
    database_type            => 'Torii-Test-City',
    languages                => ['en', 'de'],
    description              => { en => 'torii geoip2 test data' },
    remove_reserved_networks => 0,
    alias_ipv6_to_ipv4       => 1,
    map_key_type_callback    => sub { $types{ $_[0] } },
);

sub country {
    my ($code, $en, $de, $eu) = @_;
    return { iso_code => $code, names => { en => $en, de => $de }, is_in_european_union => $eu };
}

my %germany = (
    continent => { code => 'EU', names => { en => 'Europe', de => 'Europa' } },
    country   => country('DE', 'Germany', 'Deutschland', 1),
    city      => { names => { en => 'Berlin', de => 'Berlin' }, population => 3644826 },
    location  => { latitude => 52.5167, longitude => 13.4, accuracy_radius => 50, offset => -42, ratio => 1.5 },
    subdivisions => [ { iso_code => 'BE', names => { en => 'Land Berlin', de => 'Land Berlin' } } ],
    big  => Math::BigInt->new('18446744073709551615'),
    huge => Math::BigInt->new('0x0102030405060708090a0b0c0d0e0f10'),
    raw  => 'abc',
);
my %austria = (
    continent => { code => 'EU', names => { en => 'Europe', de => 'Europa' } },
    country   => country('AT', 'Austria', 'Österreich', 1),
    city      => { names => { en => 'Vienna', de => 'Wien' }, population => 1897491 },
    location  => { latitude => 48.2082, longitude => 16.3738, accuracy_radius => 20 },
);

$tree->insert_network('198.51.100.0/24', $variant eq '2' ? \%austria : \%germany);
$tree->insert_network('203.0.113.0/24', {
    continent => { code => 'NA', names => { en => 'North America', de => 'Nordamerika' } },
    country   => country('US', 'United States', 'Vereinigte Staaten', 0),
    location  => { latitude => -33.86785, longitude => -151.20732 },
});
$tree->insert_network('192.0.2.0/24', { country => country('FR', 'France', 'Frankreich', 1) });
$tree->insert_network('2001:db8::/32', {
    continent => { code => 'EU', names => { en => 'Europe', de => 'Europa' } },
    country   => country('NL', 'Netherlands', 'Niederlande', 1),
});

# The writer stamps the time it runs; the variant is told apart by content.
open my $fh, '>:raw', "$out.tmp" or die "$out.tmp: $!\n";
$tree->write_tree($fh);
close $fh or die "$out.tmp: $!\n";
rename "$out.tmp", $out or die "$out: $!\n";
