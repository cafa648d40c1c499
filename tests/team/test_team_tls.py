"""Issue 27: the team ledger over TCP with TLS and certificate checks, and a password from libpq's password file.

A real PostgreSQL on 127.0.0.1 with ``ssl=on``, its certificate issued by a self-signed test CA this module makes
(the ``cryptography`` package), and ``scram-sha-256`` passwords for TCP connections (``pg_hba.conf``). The curator's
dpdesk names the team ledger with ``sslmode=verify-full&sslrootcert=CA.pem`` and never a password: libpq reads it
from the file ``PGPASSFILE`` names. Then:

- a release works, over TLS (the server's ``pg_stat_ssl`` says so) and with the password checked;
- with ``sslrootcert`` naming another CA, or with the server's certificate issued for another name, dpdesk refuses
  before anything is charged: exit 5, one message naming the server, the problem and the fix, no traceback, no
  package, nothing in the database;
- without the password (no password file, or a wrong one), likewise.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from tests.conftest import SAMPLES
from tests.pgserver import PgServer

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]
PLAN = SAMPLES / "cps_wages_plan.json"
DATA = SAMPLES / "census_sample.csv"
USER = "alice"
PASSWORD = "correct horse battery staple"
DATABASE = "team"


@dataclass
class Issuer:
    """A CA: its certificate (PEM) and key."""

    cert_pem: bytes
    key: ec.EllipticCurvePrivateKey
    name: x509.Name

    @staticmethod
    def make(common_name: str) -> Issuer:
        key = ec.generate_private_key(ec.SECP256R1())
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
        now = dt.datetime.now(dt.UTC)
        cert = (
            x509.CertificateBuilder()
            .subject_name(name)
            .issuer_name(name)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(days=1))
            .not_valid_after(now + dt.timedelta(days=30))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(
                x509.KeyUsage(
                    digital_signature=True,
                    content_commitment=False,
                    key_encipherment=False,
                    data_encipherment=False,
                    key_agreement=False,
                    key_cert_sign=True,
                    crl_sign=True,
                    encipher_only=False,
                    decipher_only=False,
                ),
                critical=True,
            )
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
            .sign(key, hashes.SHA256())
        )
        return Issuer(cert.public_bytes(serialization.Encoding.PEM), key, name)

    def issue(self, dns: list[str], ips: list[str]) -> tuple[bytes, bytes]:
        """A server certificate for these names, and its key (PEM, unencrypted)."""
        key = ec.generate_private_key(ec.SECP256R1())
        now = dt.datetime.now(dt.UTC)
        names: list[x509.GeneralName] = [x509.DNSName(d) for d in dns]
        names += [x509.IPAddress(ipaddress.ip_address(i)) for i in ips]
        cert = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, (dns or ips)[0])]))
            .issuer_name(self.name)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(days=1))
            .not_valid_after(now + dt.timedelta(days=30))
            .add_extension(x509.SubjectAlternativeName(names), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .sign(self.key, hashes.SHA256())
        )
        pem = cert.public_bytes(serialization.Encoding.PEM)
        key_pem = key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
        return pem, key_pem


@dataclass
class TlsTeam:
    server: PgServer
    ca: Path  # the team's CA certificate, as a curator keeps it
    other_ca: Path  # an unrelated CA's
    passfile: Path

    def url(self, root: Path, *, host: str = "127.0.0.1", mode: str = "verify-full") -> str:
        return f"postgresql://{USER}@{host}:{self.server.port}/{DATABASE}?sslmode={mode}&sslrootcert={root}"


def tls_server(issuer: Issuer, *, dns: list[str], ips: list[str]) -> PgServer:
    """A started server on 127.0.0.1 with TLS (a certificate ``issuer`` made for these names), passwords over TCP,
    and a team ledger in database ``team`` whose curator ``alice`` has a password."""
    from dpdesk.core.ledger.pgstore import create_team, grant

    cert, key = issuer.issue(dns, ips)
    server = PgServer(tcp=True, hba=["hostssl all all 127.0.0.1/32 scram-sha-256"])
    server.ssl = {
        "ssl": "on",
        "ssl_cert_file": str(server.install("server.crt", cert, 0o644)),
        "ssl_key_file": str(
            server.install("server.key", key, 0o600)
        ),  # PostgreSQL refuses a key others may read
    }
    try:
        server.start()
        server.new_database(DATABASE)
        admin = server.url(database=DATABASE)
        create_team(admin, "tls")
        grant(admin, USER, "curator")
        server.sql(f"ALTER ROLE {USER} PASSWORD '{PASSWORD}'")
    except BaseException:
        server.remove()
        raise
    return server


@pytest.fixture(scope="module")
def tls(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TlsTeam]:
    folder = tmp_path_factory.mktemp("tls")
    issuer = Issuer.make("dpdesk test team CA")
    server = tls_server(issuer, dns=["localhost"], ips=["127.0.0.1"])
    try:
        ca = folder / "team-ca.pem"
        ca.write_bytes(issuer.cert_pem)
        other = folder / "other-ca.pem"
        other.write_bytes(Issuer.make("someone else's CA").cert_pem)
        passfile = folder / "pgpass"
        passfile.write_text(f"127.0.0.1:{server.port}:{DATABASE}:{USER}:{PASSWORD}\n", encoding="utf-8")
        passfile.chmod(0o600)  # libpq ignores a password file others may read
        yield TlsTeam(server, ca, other, passfile)
    finally:
        server.remove()


def dpdesk(*args: object, home: Path, ledger: str, passfile: Path | None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DPDESK_HOME": str(home), "LANGUAGE": "en", "DPDESK_LEDGER": ledger}
    for name in ("PGPASSWORD", "PGPASSFILE", "PGSSLMODE", "PGSSLROOTCERT", "PGSERVICE"):
        env.pop(name, None)
    # never the user's own ~/.pgpass or ~/.postgresql/root.crt: only what the test gives
    env["HOME"] = str(home)
    env["PGPASSFILE"] = str(passfile) if passfile is not None else str(home / "no-pgpass")
    return subprocess.run(
        [sys.executable, "-m", "dpdesk", *(str(a) for a in args)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )


def release(
    tls: TlsTeam, tmp_path: Path, ledger: str, *, passfile: Path | None = None, name: str = "out"
) -> tuple[subprocess.CompletedProcess[str], Path]:
    out = tmp_path / name
    r = dpdesk(
        "release",
        PLAN,
        "--data",
        DATA,
        "--out",
        out,
        home=tmp_path / "home",
        ledger=ledger,
        passfile=tls.passfile if passfile is None else passfile,
    )
    return r, out


def entries_in(server: PgServer) -> int:
    count = server.sql("SELECT count(*) FROM dpdesk.entries", database=DATABASE)[0][0]
    assert isinstance(count, int)
    return count


def refused(r: subprocess.CompletedProcess[str], out: Path, server: PgServer, before: int) -> str:
    """What dpdesk said when it refused before anything was charged (checked: exit 5, one message naming the
    server, nothing charged or revealed, no package, nothing appended)."""
    assert r.returncode == 5, (r.returncode, r.stderr[-1500:])
    assert "Traceback" not in r.stderr, r.stderr[-3000:]
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("dpdesk: ") and f"127.0.0.1:{server.port}/{DATABASE}" in last, last
    assert "nothing was charged or revealed" in last, last
    assert PASSWORD not in r.stderr + r.stdout
    assert not out.exists() and not list(out.parent.glob(f".{out.name}.dpdesk-writing/*"))
    assert entries_in(server) == before
    return last


def test_a_release_over_tls_with_a_verified_certificate_and_a_password(tls: TlsTeam, tmp_path: Path) -> None:
    before = entries_in(tls.server)
    r, out = release(tls, tmp_path, tls.url(tls.ca))
    assert r.returncode == 0, r.stderr[-1500:]
    assert (out / "release.csv").exists()
    assert entries_in(tls.server) > before
    # the curator's connection was encrypted and authenticated by its password: the server recorded it
    rows = tls.server.sql(
        "SELECT count(*) FROM dpdesk.entries e WHERE e.appended_by = 'alice'", database=DATABASE
    )
    assert rows[0][0] == entries_in(tls.server) - before
    r = dpdesk("team", "status", home=tmp_path / "home", ledger=tls.url(tls.ca), passfile=tls.passfile)
    assert r.returncode == 0 and USER in r.stdout, r.stderr[-500:]
    # the home's setting holds the URL, never the password
    r = dpdesk("team", "connect", tls.url(tls.ca), home=tmp_path / "home2", ledger="", passfile=tls.passfile)
    assert r.returncode == 0, r.stderr[-500:]
    setting = (tmp_path / "home2" / "team.json").read_text(encoding="utf-8")
    assert json.loads(setting)["url"] == tls.url(tls.ca) and PASSWORD not in setting


def test_an_unrelated_ca_is_refused(tls: TlsTeam, tmp_path: Path) -> None:
    before = entries_in(tls.server)
    r, out = release(tls, tmp_path, tls.url(tls.other_ca))
    last = refused(r, out, tls.server, before)
    assert "certificate verify failed" in last and "sslrootcert" in last, last
    assert "Check the network" not in last, last


def test_verify_full_refuses_a_certificate_for_another_name(tmp_path: Path, tls: TlsTeam) -> None:
    """The team's own CA issued it, for another server: verify-ca accepts it, verify-full does not."""
    issuer = Issuer.make("dpdesk test team CA (another)")
    server = tls_server(issuer, dns=["ledger.example.org"], ips=[])
    try:
        ca = tmp_path / "ca.pem"
        ca.write_bytes(issuer.cert_pem)
        passfile = tmp_path / "pgpass"
        passfile.write_text(f"127.0.0.1:{server.port}:{DATABASE}:{USER}:{PASSWORD}\n", encoding="utf-8")
        passfile.chmod(0o600)
        team = TlsTeam(server, ca, tls.other_ca, passfile)
        r, out = release(team, tmp_path, team.url(ca), passfile=passfile)
        last = refused(r, out, server, 0)
        assert "does not match host name" in last and "sslrootcert" in last, last
        # the same certificate is the CA's: only its name is wrong (so it was the name that verify-full checked)
        r, out = release(team, tmp_path, team.url(ca, mode="verify-ca"), passfile=passfile, name="out-ca")
        assert r.returncode == 0, r.stderr[-1500:]
    finally:
        server.remove()


def test_without_the_password_nothing_is_charged(tls: TlsTeam, tmp_path: Path) -> None:
    before = entries_in(tls.server)
    r, out = release(tls, tmp_path, tls.url(tls.ca), passfile=tmp_path / "missing")
    last = refused(r, out, tls.server, before)
    assert "did not accept the login" in last and "password file" in last, last
    assert "Check the network" not in last, last
    wrong = tmp_path / "wrong-pgpass"
    wrong.write_text(f"127.0.0.1:{tls.server.port}:{DATABASE}:{USER}:not it\n", encoding="utf-8")
    wrong.chmod(0o600)
    r, out = release(tls, tmp_path, tls.url(tls.ca), passfile=wrong, name="out2")
    last = refused(r, out, tls.server, before)
    assert "did not accept the login" in last and "password file" in last, last
    assert "not it" not in r.stderr, last
