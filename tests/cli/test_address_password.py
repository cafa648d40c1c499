"""Issue 32, a source only the cluster reads: an address that carries a password (``s3a://KEY:SECRET@bucket/...``)
is refused before anything is read, named or charged, with the password hidden in the message. dpdesk names a
source in the ledger, the report, the package and the app's recent tables, so it must never hold one. On the code
before the refusal (92ce04d) this command started Spark and printed the address whole: the test failed there."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from dpdesk.core.release.engines.spark.session import SparkSource, hidden_password, refuse_password
from tests.conftest import SAMPLES

SECRET = "wJalrXUtnFEMI-K7MDENG"


def test_a_password_in_the_address_is_hidden_and_a_user_name_alone_is_not_a_secret() -> None:
    assert (
        hidden_password(f"s3a://AKIA1:{SECRET}@bucket/data/t.parquet")
        == "s3a://AKIA1:***@bucket/data/t.parquet"
    )
    assert hidden_password(f"hdfs://ann:{SECRET}@nn:8020/t") == "hdfs://ann:***@nn:8020/t"
    assert (
        hidden_password("abfss://container@account.dfs.core.windows.net/t") is None
    )  # a container, no secret
    assert hidden_password("hdfs://nn:8020/data/t") is None
    assert hidden_password("/data/user:name@host/t.parquet") is None  # a local path, not an address
    refuse_password(SparkSource.parse("table:db.people"))  # a catalog name is never an address
    with pytest.raises(Exception, match=r"\*\*\*") as caught:
        refuse_password(SparkSource.parse(f"s3a://AKIA1:{SECRET}@bucket/t.parquet"))
    assert SECRET not in str(caught.value)


def test_the_command_line_refuses_it_with_exit_2_and_keeps_nothing(tmp_path: Path) -> None:
    home, out = tmp_path / "home", tmp_path / "out"
    env = {**os.environ, "DPDESK_HOME": str(home)}
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "dpdesk",
            "release",
            str(SAMPLES / "cps_wages_plan.json"),
            "--data",
            f"s3a://AKIA1:{SECRET}@bucket/data/people.parquet",
            "--engine",
            "spark",
            "--spark-master",
            "local[1]",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )
    assert r.returncode == 2, r.stderr[-2000:]
    assert "holds a password" in r.stderr and "s3a://AKIA1:***@bucket/data/people.parquet" in r.stderr
    assert SECRET not in r.stdout + r.stderr
    assert not out.exists()
    kept = [p for p in home.rglob("*") if p.is_file() and SECRET.encode() in p.read_bytes()]
    assert kept == [] and not list(home.glob("ledgers/*.jsonl"))


@pytest.mark.parametrize(
    ("address", "shown"),
    [
        # an AWS secret key often holds "/": written raw, the authority seems to end inside the secret
        (
            "s3a://AKIA1:wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY@bucket/t.parquet",
            "s3a://AKIA1:***@bucket/t.parquet",
        ),
        ("s3a://AKIA1:/K7MDENG@bucket/t.parquet", "s3a://AKIA1:***@bucket/t.parquet"),
        ("s3a://AKIA1:se@cr/et@bucket/t.parquet", "s3a://AKIA1:***@bucket/t.parquet"),
        ("s3a://AKIA1:pa@ss@bucket/t.parquet", "s3a://AKIA1:***@bucket/t.parquet"),
        # a port, and an "@" in the path: no secret
        ("hdfs://nn:8020/data/a@b.parquet", None),
        ("s3a://bucket/data/a:b@c.parquet", None),
    ],
)
def test_a_secret_written_raw_with_a_slash_or_an_at_sign_is_still_found(
    address: str, shown: str | None
) -> None:
    """A password with "/" or "@" in it, written without percent-encoding, is still a password: found and hidden
    whole (before, a raw "/" ended the authority inside the secret, so the address passed and would have been kept
    in the ledger, the report and the package)."""
    assert hidden_password(address) == shown


@pytest.mark.parametrize(
    ("address", "shown"),
    [
        # a user name with a raw "@" (an e-mail address): the user part runs to the authority's last "@"
        (
            "ftp://ann@corp.example:s3cret@files.example/t.csv",
            "ftp://ann@corp.example:***@files.example/t.csv",
        ),
        ("s3a://ann@corp:s3/cret@bucket/t.parquet", "s3a://ann@corp:***@bucket/t.parquet"),
        # ordinary addresses: no password, never refused
        ("hdfs://ann@corp.example@nn:8020/t.parquet", None),
        ("hdfs://[::1]:8020/data/a@b.parquet", None),
        ("hdfs://[::1]/a@b.parquet", None),
        ("hdfs://ann@[::1]:8020/a@b.parquet", None),
        ("abfss://container@account.dfs.core.windows.net:443/p@x.parquet", None),
        ("file:///tmp/a:b@c.csv", None),
    ],
)
def test_a_user_name_with_an_at_sign_and_an_ipv6_host_are_read_as_written(
    address: str, shown: str | None
) -> None:
    """A password after a user name that holds a raw "@" is found (before, the user part ended at the first "@",
    so ``ann@corp.example:s3cret@...`` passed with its password, kept in the ledger, the report and the package),
    and an IPv6 host's colons are not a password (before, ``hdfs://[::1]:8020/a@b.parquet`` was refused)."""
    assert hidden_password(address) == shown
