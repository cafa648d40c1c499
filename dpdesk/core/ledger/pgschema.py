"""The team ledger's schema: what ``dpdesk team init`` creates in a PostgreSQL database, and the rules it enforces.

Everything the database promises is here, in SQL, so that a database administrator can read it
(``dpdesk team init URL --print-sql`` prints exactly this) and so that no client can bend it:

* **Roles** (``<prefix>_curator``, ``<prefix>_officer``, ``<prefix>_auditor``; roles belong to the whole server, so
  two teams on one server use two prefixes, in two databases). Nobody but the owner role ``<prefix>_owner``, which
  cannot log in, may write a table: curators and officers have no INSERT, UPDATE, DELETE or TRUNCATE on anything,
  and append only through :func:`dpdesk.append`. The auditor reads the entries and the datasets, nothing else.
* **The functions** are ``SECURITY DEFINER``, owned by ``<prefix>_owner``, with ``SET search_path = pg_catalog,
  dpdesk, pg_temp`` (a session's temporary schema last: PostgreSQL searches it first for type names unless it is
  named) and ``EXECUTE`` revoked from ``PUBLIC``; ``TEMPORARY`` on the database is revoked from ``PUBLIC`` too. They decide by ``session_user``'s membership (never by anything
  the client states) and record who appended and when (``session_user``, the server's clock) outside the hashed
  entry.
* **An append** (one transaction, the dataset's row locked ``FOR UPDATE``) checks: the line is one line of UTF-8
  JSON ending in a newline; its ``hash`` is the SHA-256 of the line without it (computed here with ``sha256()``);
  it links to the dataset's head (``seq`` one more, ``prev`` the head's hash: two writers can never fork a chain);
  it names this dataset; its ``author`` is ``session_user``; its type is one the role may append (settings after the
  first, governance, acknowledgements and declarations of a new dataset: officers only; entries only old versions
  wrote: nobody); and a spend keeps the dataset's total, from the entries' stated costs, within the budget under
  the accounting method in force (sequential: exact decimal sums; advanced: each release's bound in ``numeric``,
  added; zCDP: the rho total converted with the tight bound of Canonne, Kamath and Steinke, minimised over its
  order). The client checks the same before it appends: both must pass, so where rounding differs the stricter
  result wins.
* **The entries are kept as the bytes the client sent** (``bytea``: ``jsonb`` would reorder keys and rewrite
  numbers, and the chain's hashes are over the bytes), so a team export verifies like a file ledger.

What it does not protect against is said in SECURITY.md: a curator's modified client can state a lower cost for its
own release than its plan costs, and the database's administrators and its backups are trusted.
"""

from __future__ import annotations

import re

#: the version of this schema, recorded in ``dpdesk.team`` (a client refuses a schema it does not know). Version 3
#: has version 2's SQL; its clients record both schemes of content key, and a team of version 3 refuses the clients
#: of version 2, which find a table by its scheme-1 key only: a table a curator claimed from a cluster (scheme 2
#: only) would be a fresh dataset to them, a second budget for its rows
SCHEMA_VERSION = 3

#: the oldest PostgreSQL major version supported, and the one the tests run on (Debian 12's): older ones are past
#: their end of life (13 ended in November 2025, 14 in November 2026)
OLDEST_SERVER = 15
#: a table's sketches as the team keeps them, at most (its content and column sketches as JSON: about 75 KB for a
#: table of 9 columns), and how many of them a curator's dpdesk compares a new table with (the most recent first:
#: at most 256 x 75 KB read per new table)
MAX_SKETCH_BYTES = 1 << 20
MAX_SKETCHES = 256

#: a role prefix: a letter, then up to 30 letters, digits and underscores (a role name stays under 63 bytes)
PREFIX_RE = re.compile(r"[a-z][a-z0-9_]{0,30}")

#: SQLSTATEs the append function raises (class DP: dpdesk's own), and what each means
REFUSALS = {
    "DP001": "role",  # the session's role may not append this (or anything)
    "DP002": "line",  # not one line of UTF-8 JSON naming this dataset
    "DP003": "hash",  # the hash is not the SHA-256 of the line without it
    "DP004": "link",  # the line does not link to the dataset's head (another curator appended first)
    "DP005": "author",  # the stated author is not the session's user
    "DP006": "budget",  # the spend would take the dataset past its budget
    "DP007": "settings",  # a spend before any budget was fixed, or settings that cannot be read
    "DP008": "key",  # a dataset key or id that is not one
    "DP009": "checkpoint",  # a checkpoint that understates the totals or misstates the settings or governance
}

_SQL = r"""
-- dpdesk team ledger, schema version {version}; roles prefixed {prefix}_ (dpdesk team init --print-sql)
BEGIN;
DO $roles$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{prefix}_owner') THEN
    CREATE ROLE {prefix}_owner NOLOGIN;
  END IF;
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{prefix}_curator') THEN
    CREATE ROLE {prefix}_curator NOLOGIN;
  END IF;
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{prefix}_officer') THEN
    CREATE ROLE {prefix}_officer NOLOGIN;
  END IF;
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{prefix}_auditor') THEN
    CREATE ROLE {prefix}_auditor NOLOGIN;
  END IF;
END
$roles$;
-- whoever runs this must be able to act as the owner while creating its objects (given back at the end)
GRANT {prefix}_owner TO CURRENT_USER;
CREATE SCHEMA dpdesk AUTHORIZATION {prefix}_owner;
SET LOCAL ROLE {prefix}_owner;
REVOKE ALL ON SCHEMA dpdesk FROM PUBLIC;

CREATE TABLE dpdesk.team (
  one boolean PRIMARY KEY DEFAULT true CHECK (one),
  schema_version integer NOT NULL,
  prefix text NOT NULL,
  -- the team's key for data files' hashes: a file's SHA-256 never leaves a curator's machine, its keyed hash does
  secret bytea NOT NULL CHECK (length(secret) = 32),
  created timestamptz NOT NULL DEFAULT clock_timestamp()
);
INSERT INTO dpdesk.team (schema_version, prefix, secret) VALUES ({version}, '{prefix}', gen_random_bytes_32());

CREATE TABLE dpdesk.datasets (
  dataset text PRIMARY KEY CHECK (dataset ~ '^ds-[0-9a-f]{{32}}$'),
  seq bigint NOT NULL DEFAULT 0,
  head text NOT NULL DEFAULT repeat('0', 64),
  method text,
  budget_epsilon numeric,
  budget_delta numeric,
  retired boolean NOT NULL DEFAULT false,
  created_by text NOT NULL,
  created timestamptz NOT NULL
);

CREATE TABLE dpdesk.entries (
  dataset text NOT NULL REFERENCES dpdesk.datasets,
  seq bigint NOT NULL,
  line bytea NOT NULL,
  hash text NOT NULL,
  type text NOT NULL,
  appended_by text NOT NULL,
  appended timestamptz NOT NULL,
  PRIMARY KEY (dataset, seq)
);

-- each release's stated costs, summed per release (a correction raises them), for the budget check
CREATE TABLE dpdesk.releases (
  dataset text NOT NULL REFERENCES dpdesk.datasets,
  release_id text NOT NULL,
  epsilon numeric NOT NULL,
  delta numeric NOT NULL,
  rho numeric NOT NULL,
  epsilon_sq numeric NOT NULL,
  epsilon_em numeric NOT NULL,
  delta_prime numeric,
  PRIMARY KEY (dataset, release_id)
);

-- which dataset a data file belongs to, by its keyed hash (HMAC-SHA256 under dpdesk.team.secret)
CREATE TABLE dpdesk.keys (
  keyed text PRIMARY KEY CHECK (keyed ~ '^[0-9a-f]{{64}}$'),
  dataset text NOT NULL REFERENCES dpdesk.datasets,
  added_by text NOT NULL,
  added timestamptz NOT NULL
);

-- the sketches of each dataset's tables (content sketch and column sketches, JSON made with the team's identity
-- secret, as a home keeps them in identity/datasets/), by the keyed content key: a near-copy of a table the team
-- knows is recognised on every curator's machine
CREATE TABLE dpdesk.sketches (
  content text PRIMARY KEY CHECK (content ~ '^[0-9a-f]{{64}}$'),
  dataset text NOT NULL REFERENCES dpdesk.datasets,
  sketch text NOT NULL CHECK (octet_length(sketch) <= {max_sketch}),
  added_by text NOT NULL,
  added timestamptz NOT NULL
);

CREATE FUNCTION dpdesk.is_curator() RETURNS boolean LANGUAGE sql STABLE
SECURITY DEFINER SET search_path = pg_catalog, dpdesk, pg_temp AS $f$
  SELECT pg_has_role(session_user, '{prefix}_curator', 'MEMBER') OR pg_has_role(session_user, '{prefix}_officer', 'MEMBER')
$f$;

CREATE FUNCTION dpdesk.is_officer() RETURNS boolean LANGUAGE sql STABLE
SECURITY DEFINER SET search_path = pg_catalog, dpdesk, pg_temp AS $f$
  SELECT pg_has_role(session_user, '{prefix}_officer', 'MEMBER')
$f$;

-- the team's keying secret, for curators and officers only
CREATE FUNCTION dpdesk.secret() RETURNS bytea LANGUAGE plpgsql STABLE
SECURITY DEFINER SET search_path = pg_catalog, dpdesk, pg_temp AS $f$
BEGIN
  IF NOT dpdesk.is_curator() THEN
    RAISE EXCEPTION USING ERRCODE = 'DP001', MESSAGE = format('%s is not a curator of this team', session_user);
  END IF;
  RETURN (SELECT secret FROM dpdesk.team);
END
$f$;

-- the dataset of a keyed file hash, made (with the id the client drew) when the team has none yet; with the keyed
-- content key of the file's rows (p_content), a file whose rows the team knows joins their dataset, and a new
-- dataset is recorded under both (one transaction, under locks on both keys: two curators opening two saves of one
-- new table at once get one dataset)
CREATE FUNCTION dpdesk.claim(p_keyed text, p_dataset text, p_content text DEFAULT NULL, p_sketch text DEFAULT NULL)
RETURNS text
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, dpdesk, pg_temp AS $f$
DECLARE known text; by_content text;
BEGIN
  IF NOT dpdesk.is_curator() THEN
    RAISE EXCEPTION USING ERRCODE = 'DP001', MESSAGE = format('%s is not a curator of this team', session_user);
  END IF;
  IF p_keyed !~ '^[0-9a-f]{{64}}$' OR p_dataset !~ '^ds-[0-9a-f]{{32}}$'
     OR (p_content IS NOT NULL AND p_content !~ '^[0-9a-f]{{64}}$') THEN
    RAISE EXCEPTION USING ERRCODE = 'DP008', MESSAGE = 'not a keyed file hash and a dataset id';
  END IF;
  -- one lock for the whole claim (keys are few and claims rare): no two claims interleave
  PERFORM pg_advisory_xact_lock(hashtextextended('dpdesk.keys', 0));
  SELECT dataset INTO known FROM dpdesk.keys WHERE keyed = p_keyed;
  IF p_content IS NOT NULL THEN
    SELECT dataset INTO by_content FROM dpdesk.keys WHERE keyed = p_content;
  END IF;
  IF known IS NULL THEN
    known := coalesce(by_content, p_dataset);
    IF by_content IS NULL THEN  -- a new table: a new dataset, never one that exists (another table's)
      INSERT INTO dpdesk.datasets (dataset, created_by, created) VALUES (known, session_user, clock_timestamp())
        ON CONFLICT DO NOTHING;
      IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'DP008', MESSAGE = 'a new table is given a new dataset id, never one in use';
      END IF;
    END IF;
    INSERT INTO dpdesk.keys VALUES (p_keyed, known, session_user, clock_timestamp());
  END IF;
  IF p_content IS NOT NULL AND by_content IS NULL THEN
    INSERT INTO dpdesk.keys VALUES (p_content, known, session_user, clock_timestamp());
    IF p_sketch IS NOT NULL THEN  -- the table's sketches, with the key of the rows they were made from
      INSERT INTO dpdesk.sketches VALUES (p_content, known, p_sketch, session_user, clock_timestamp())
        ON CONFLICT DO NOTHING;
    END IF;
  END IF;
  RETURN known;
END
$f$;

-- a text as jsonb, or NULL when it is not JSON (a sketch a client wrote wrong never breaks the functions that read
-- them all)
CREATE FUNCTION dpdesk.try_jsonb(p_text text) RETURNS jsonb LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, dpdesk, pg_temp AS $f$
BEGIN
  RETURN p_text::jsonb;
EXCEPTION WHEN others THEN
  RETURN NULL;
END
$f$;

-- per live dataset, how many of its tables' sketches are of identity scheme 1 and how many of a later scheme, over
-- ALL the team's sketches (not the near-copy check's window): a dataset claimed before its curators recorded
-- scheme-2 keys has fewer of the later ones, and a table only a cluster reads (named by scheme 2 alone) is refused
-- while one exists (curators and officers)
CREATE FUNCTION dpdesk.sketch_schemes() RETURNS TABLE (dataset text, scheme1 bigint, later bigint)
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, dpdesk, pg_temp AS $f$
BEGIN
  IF NOT dpdesk.is_curator() THEN
    RAISE EXCEPTION USING ERRCODE = 'DP001', MESSAGE = format('%s is not a curator of this team', session_user);
  END IF;
  RETURN QUERY
    WITH parsed AS (
      SELECT s.dataset, dpdesk.try_jsonb(s.sketch) -> 'contents' AS contents
      FROM dpdesk.sketches s JOIN dpdesk.datasets d USING (dataset) WHERE NOT d.retired
    )
    SELECT p.dataset,
      count(*) FILTER (WHERE coalesce(c.value ->> 'scheme', '1') = '1'),
      count(*) FILTER (WHERE coalesce(c.value ->> 'scheme', '1') <> '1')
    FROM parsed p
    CROSS JOIN LATERAL jsonb_each(CASE WHEN jsonb_typeof(p.contents) = 'object' THEN p.contents ELSE '{{}}'::jsonb END) c
    GROUP BY p.dataset ORDER BY p.dataset;
END
$f$;

-- the sketches of the team's live datasets' tables, the most recent first, at most p_limit (curators and officers)
CREATE FUNCTION dpdesk.sketches(p_limit integer) RETURNS TABLE (dataset text, sketch text) LANGUAGE plpgsql STABLE
SECURITY DEFINER SET search_path = pg_catalog, dpdesk, pg_temp AS $f$
BEGIN
  IF NOT dpdesk.is_curator() THEN
    RAISE EXCEPTION USING ERRCODE = 'DP001', MESSAGE = format('%s is not a curator of this team', session_user);
  END IF;
  RETURN QUERY SELECT s.dataset, s.sketch FROM dpdesk.sketches s JOIN dpdesk.datasets d USING (dataset)
    WHERE NOT d.retired ORDER BY s.added DESC, s.content LIMIT least(greatest(p_limit, 0), {max_sketches});
END
$f$;

-- the dataset a keyed file hash belongs to (NULL: none yet)
CREATE FUNCTION dpdesk.dataset_of(p_keyed text) RETURNS text LANGUAGE plpgsql STABLE
SECURITY DEFINER SET search_path = pg_catalog, dpdesk, pg_temp AS $f$
BEGIN
  IF NOT dpdesk.is_curator() THEN
    RAISE EXCEPTION USING ERRCODE = 'DP001', MESSAGE = format('%s is not a curator of this team', session_user);
  END IF;
  RETURN (SELECT dataset FROM dpdesk.keys WHERE keyed = p_keyed);
END
$f$;

-- the writer lock of a dataset's chain, held by the session for a release's check-then-charge: a session advisory
-- lock whose key is derived from the team's secret, so that only curators and officers (who may call this) take it
CREATE FUNCTION dpdesk.try_lock(p_dataset text) RETURNS boolean LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, dpdesk, pg_temp AS $f$
BEGIN
  IF NOT dpdesk.is_curator() THEN
    RAISE EXCEPTION USING ERRCODE = 'DP001', MESSAGE = format('%s is not a curator of this team', session_user);
  END IF;
  RETURN pg_try_advisory_lock(dpdesk.lock_key(p_dataset));
END
$f$;

CREATE FUNCTION dpdesk.unlock(p_dataset text) RETURNS boolean LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, dpdesk, pg_temp AS $f$
BEGIN
  RETURN pg_advisory_unlock(dpdesk.lock_key(p_dataset));
END
$f$;

CREATE FUNCTION dpdesk.lock_key(p_dataset text) RETURNS bigint LANGUAGE sql STABLE
SET search_path = pg_catalog, dpdesk, pg_temp AS $f$
  SELECT ('x' || encode(substring(sha256((SELECT secret FROM dpdesk.team) || convert_to('lock:' || p_dataset, 'UTF8'))
                                  FROM 1 FOR 8), 'hex'))::bit(64)::bigint
$f$;

-- zCDP to (epsilon, delta): the tight bound of Canonne, Kamath & Steinke (2020, Prop. 12/Cor. 13),
--   epsilon = inf over a > 1 of  a*rho + (ln(1/delta) + (a-1) ln(a-1) - a ln a) / (a-1),
-- minimised by golden-section search over ln(a-1); any order gives an upper bound, so a search short of the
-- infimum only makes the check stricter. NULL when delta is not in (0, 1).
CREATE FUNCTION dpdesk.rho_to_epsilon(rho numeric, delta numeric) RETURNS numeric LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, dpdesk, pg_temp AS $f$
DECLARE
  r float8 := rho; l float8; g float8 := (sqrt(5.0) - 1.0) / 2.0;
  lo float8 := -30.0; hi float8 := 30.0; x1 float8; x2 float8; f1 float8; f2 float8; a float8; best float8;
BEGIN
  IF rho <= 0 THEN RETURN 0; END IF;
  IF delta <= 0 OR delta >= 1 THEN RETURN NULL; END IF;
  l := ln(1.0 / delta::float8);
  IF r > 1e4 THEN  -- the simple bound, also an upper bound (as the engine does)
    RETURN (rho + 2 * sqrt(rho * ln(1 / delta)));
  END IF;
  x1 := hi - g * (hi - lo); x2 := lo + g * (hi - lo);
  a := 1 + exp(x1); f1 := a * r + (l + (a - 1) * ln(a - 1) - a * ln(a)) / (a - 1);
  a := 1 + exp(x2); f2 := a * r + (l + (a - 1) * ln(a - 1) - a * ln(a)) / (a - 1);
  FOR i IN 1..200 LOOP
    IF f1 <= f2 THEN
      hi := x2; x2 := x1; f2 := f1; x1 := hi - g * (hi - lo);
      a := 1 + exp(x1); f1 := a * r + (l + (a - 1) * ln(a - 1) - a * ln(a)) / (a - 1);
    ELSE
      lo := x1; x1 := x2; f1 := f2; x2 := lo + g * (hi - lo);
      a := 1 + exp(x2); f2 := a * r + (l + (a - 1) * ln(a - 1) - a * ln(a)) / (a - 1);
    END IF;
  END LOOP;
  best := least(f1, f2);
  RETURN greatest(best, 0)::numeric;
END
$f$;

-- what the dataset's releases add up to under its method, from their stated costs: (epsilon, delta)
CREATE FUNCTION dpdesk.spent(p_dataset text, p_method text, p_budget_delta numeric,
                             OUT epsilon numeric, OUT delta numeric) LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, dpdesk, pg_temp AS $f$
DECLARE default_dp numeric;
BEGIN
  IF p_method = 'sequential' THEN
    SELECT coalesce(sum(r.epsilon), 0), coalesce(sum(r.delta), 0) INTO epsilon, delta
      FROM dpdesk.releases r WHERE r.dataset = p_dataset;
  ELSIF p_method = 'advanced' THEN
    default_dp := CASE WHEN p_budget_delta > 0 THEN least(p_budget_delta / 10, 1e-7) END;
    IF EXISTS (SELECT 1 FROM dpdesk.releases r WHERE r.dataset = p_dataset
               AND coalesce(r.delta_prime, default_dp) IS NULL) THEN
      epsilon := NULL; delta := NULL; RETURN;  -- advanced composition needs a delta' > 0
    END IF;
    SELECT coalesce(sum(CASE WHEN r.epsilon_sq = 0 THEN 0
                         ELSE sqrt(2 * ln(1 / coalesce(r.delta_prime, default_dp)) * r.epsilon_sq) END
                         + r.epsilon_em), 0),
           coalesce(sum(r.delta + coalesce(r.delta_prime, default_dp)), 0)
      INTO epsilon, delta FROM dpdesk.releases r WHERE r.dataset = p_dataset AND r.epsilon_sq >= 0;
  ELSIF p_method = 'zcdp' THEN
    SELECT dpdesk.rho_to_epsilon(coalesce(sum(r.rho), 0), p_budget_delta), p_budget_delta INTO epsilon, delta
      FROM dpdesk.releases r WHERE r.dataset = p_dataset;
    IF epsilon = 0 THEN delta := 0; END IF;
  END IF;
END
$f$;

-- a release's stated costs added to (or, by a correction, raised in) the releases table
-- p_kind: 'spend' (a new release: its id never seen), 'correction' (raises a release already booked), 'carried'
-- (a release of another chain, carried over)
CREATE FUNCTION dpdesk.book(p_dataset text, p_release text, p_costs jsonb, p_delta_prime jsonb, p_kind text)
RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, dpdesk, pg_temp AS $f$
DECLARE c jsonb; e numeric := 0; d numeric := 0; r numeric := 0; sq numeric := 0; em numeric := 0; x numeric;
        dp numeric;
BEGIN
  IF jsonb_typeof(p_costs) IS DISTINCT FROM 'array' OR p_release IS NULL THEN
    RAISE EXCEPTION USING ERRCODE = 'DP002', MESSAGE = 'a release without its costs';
  END IF;
  IF p_kind = 'spend' AND EXISTS (SELECT 1 FROM dpdesk.releases WHERE dataset = p_dataset AND release_id = p_release) THEN
    RAISE EXCEPTION USING ERRCODE = 'DP002', MESSAGE = 'a release whose id was already recorded';
  END IF;
  IF p_kind = 'correction'
     AND NOT EXISTS (SELECT 1 FROM dpdesk.releases WHERE dataset = p_dataset AND release_id = p_release) THEN
    RAISE EXCEPTION USING ERRCODE = 'DP002', MESSAGE = 'a correction of a release that was never recorded';
  END IF;
  FOR c IN SELECT * FROM jsonb_array_elements(p_costs) LOOP
    IF jsonb_typeof(c->'name') IS DISTINCT FROM 'string'
       OR jsonb_typeof(c->'epsilon') IS DISTINCT FROM 'number' OR jsonb_typeof(c->'delta') IS DISTINCT FROM 'number'
       OR jsonb_typeof(c->'rho') IS DISTINCT FROM 'number' OR (c->>'epsilon')::numeric < 0
       OR (c->>'delta')::numeric < 0 OR (c->>'rho')::numeric < 0 THEN
      RAISE EXCEPTION USING ERRCODE = 'DP002', MESSAGE = 'a cost that is not a non-negative number';
    END IF;
    x := (c->>'epsilon')::numeric;
    e := e + x; d := d + (c->>'delta')::numeric; r := r + (c->>'rho')::numeric; sq := sq + x * x;
    -- e^x overflows a float past 600: the engine's bound is then beyond any budget, and so is this one
    em := em + CASE WHEN x > 600 THEN 1e300 ELSE x * (exp(x) - 1) END;
  END LOOP;
  IF p_delta_prime IS NULL OR jsonb_typeof(p_delta_prime) = 'null' THEN
    dp := NULL;
  ELSIF jsonb_typeof(p_delta_prime) = 'number' AND (p_delta_prime #>> '{{}}')::numeric > 0
        AND (p_delta_prime #>> '{{}}')::numeric < 1 THEN
    dp := (p_delta_prime #>> '{{}}')::numeric;
  ELSE
    RAISE EXCEPTION USING ERRCODE = 'DP002', MESSAGE = 'a delta'' that is not a number between 0 and 1';
  END IF;
  INSERT INTO dpdesk.releases AS old VALUES (p_dataset, p_release, e, d, r, sq, em, dp)
    ON CONFLICT (dataset, release_id) DO UPDATE SET
      epsilon = greatest(old.epsilon, excluded.epsilon), delta = greatest(old.delta, excluded.delta),
      rho = greatest(old.rho, excluded.rho), epsilon_sq = greatest(old.epsilon_sq, excluded.epsilon_sq),
      epsilon_em = greatest(old.epsilon_em, excluded.epsilon_em),
      delta_prime = coalesce(old.delta_prime, excluded.delta_prime);
END
$f$;

-- a checkpoint (what the history before it adds up to, which clients read instead of the whole chain) states the
-- entry before it, the settings and the governance in force, and totals no lower than the releases' stated costs
-- (the engine's own costs are never lower than the stated ones; its float sums may differ in the last digits,
-- hence the relative 1e-9 for advanced and zCDP)
CREATE FUNCTION dpdesk.check_checkpoint(p_dataset text, v jsonb, ds dpdesk.datasets) RETURNS void LANGUAGE plpgsql
SET search_path = pg_catalog, dpdesk, pg_temp AS $f$
DECLARE st jsonb := v->'state'; sp jsonb; gov text; stated_gov text; bad boolean := false;
        seq_e numeric; seq_d numeric; n numeric; adv_e numeric; rho numeric; x jsonb;
        t_e numeric; t_d numeric; t_n numeric; t_rho numeric;
BEGIN
  sp := st->'spent';
  BEGIN
    IF (st->>'seq')::bigint <> ds.seq OR st->>'hash' IS DISTINCT FROM ds.head THEN bad := true; END IF;
    IF ds.method IS NULL THEN
      bad := bad OR jsonb_typeof(st->'settings') IS DISTINCT FROM 'null';
    ELSE
      bad := bad OR (st #>> '{{settings,accounting,method}}') IS DISTINCT FROM ds.method
        OR (st #>> '{{settings,budget,epsilon}}')::numeric IS DISTINCT FROM ds.budget_epsilon
        OR (st #>> '{{settings,budget,delta}}')::numeric IS DISTINCT FROM ds.budget_delta;
    END IF;
    SELECT hash INTO gov FROM dpdesk.entries WHERE dataset = p_dataset AND type = 'govern' ORDER BY seq DESC LIMIT 1;
    stated_gov := CASE WHEN jsonb_typeof(st->'governance_entry') = 'object' THEN st #>> '{{governance_entry,hash}}' END;
    bad := bad OR gov IS DISTINCT FROM stated_gov;
    seq_e := (sp #>> '{{sequential,epsilon}}')::numeric;
    seq_d := (sp #>> '{{sequential,delta}}')::numeric;
    adv_e := (sp #>> '{{advanced,epsilon}}')::numeric;
    n := (sp->>'releases')::numeric;
    rho := 0;
    FOR x IN SELECT * FROM jsonb_array_elements(sp #> '{{zcdp,rho_partials}}') LOOP
      rho := rho + (x #>> '{{}}')::numeric;
    END LOOP;
    IF 'NaN' IN (seq_e, seq_d, adv_e, n, rho) OR seq_e IS NULL OR seq_d IS NULL OR n IS NULL THEN bad := true; END IF;
  EXCEPTION WHEN OTHERS THEN
    bad := true;
  END;
  IF NOT bad THEN
    SELECT coalesce(sum(r.epsilon), 0), coalesce(sum(r.delta), 0), count(*), coalesce(sum(r.rho), 0)
      INTO t_e, t_d, t_n, t_rho FROM dpdesk.releases r WHERE r.dataset = p_dataset;
    bad := seq_e < t_e OR seq_d < t_d OR n < t_n OR rho < t_rho * (1 - 1e-9);
    IF NOT bad AND ds.method IS NOT NULL AND (ds.budget_delta > 0 OR NOT EXISTS (
        SELECT 1 FROM dpdesk.releases r WHERE r.dataset = p_dataset AND r.delta_prime IS NULL)) THEN
      SELECT sp2.epsilon INTO t_e FROM dpdesk.spent(p_dataset, 'advanced', ds.budget_delta) sp2;
      bad := adv_e IS NULL OR (t_e IS NOT NULL AND adv_e < t_e * (1 - 1e-9));
    END IF;
  END IF;
  IF bad THEN
    RAISE EXCEPTION USING ERRCODE = 'DP009',
      MESSAGE = 'a checkpoint that does not state the entry before it, the settings and governance in force, and '
                'at least the releases'' stated costs';
  END IF;
END
$f$;

-- an entry every client can read (dpdesk.core.common.jsonin and dpdesk.core.ledger.entries.readable): nesting at
-- most 32 deep, no key twice in an object, numbers a float holds (integers of at most 1000 digits), a known type,
-- the time as text, a whole sequence number, and what its type holds (costs with names and non-negative numbers, a
-- spend's charge and method, settings' budget, method and unit of privacy); a line a client cannot read would stop
-- every curator of the dataset, and a team's chain is never repaired
CREATE FUNCTION dpdesk.check_readable(body text, v jsonb) RETURNS void LANGUAGE plpgsql
SET search_path = pg_catalog, dpdesk, pg_temp AS $f$
DECLARE bad text; kind text := v->>'type'; x jsonb;
BEGIN
  WITH RECURSIVE walk(node, depth) AS (
    SELECT body::json, 1
    UNION ALL
    SELECT child.value, walk.depth + 1 FROM walk, LATERAL (
      SELECT e.value FROM json_each(CASE WHEN json_typeof(walk.node) = 'object' THEN walk.node END) e
      UNION ALL
      SELECT a.value FROM json_array_elements(CASE WHEN json_typeof(walk.node) = 'array' THEN walk.node END) a
    ) child WHERE walk.depth <= 33
  )
  SELECT CASE
    WHEN bool_or(json_typeof(node) IN ('object', 'array') AND depth > 32) THEN 'nested deeper than 32 levels'
    WHEN bool_or(json_typeof(node) = 'object' AND (SELECT count(*) <> count(DISTINCT k) FROM json_object_keys(node) k))
      THEN 'a key twice in one object'
    WHEN bool_or(json_typeof(node) = 'number' AND (abs(node::text::numeric) > 1.7976931348623157e308
      OR (node::text !~ '[.eE]' AND length(ltrim(node::text, '-')) > 1000))) THEN 'a number no float holds'
  END INTO bad FROM walk;
  IF bad IS NULL AND (kind IS NULL OR kind NOT IN ('settings', 'spend', 'acknowledge', 'package', 'correction', 'govern',
      'link', 'declare_new', 'declared_new', 'forget_identity', 'checkpoint', 'merge', 'merged_into', 'import')) THEN
    bad := format('an unknown entry type (%s)', coalesce(kind, 'none'));
  END IF;
  IF bad IS NULL AND (jsonb_typeof(v->'time') IS DISTINCT FROM 'string' OR v->>'seq' !~ '^[1-9][0-9]*$') THEN
    bad := 'an entry without its time or a whole sequence number';
  END IF;
  IF bad IS NULL AND kind = 'spend' AND (jsonb_typeof(v->'charged') IS DISTINCT FROM 'object'
      OR jsonb_typeof(v #> '{{charged,epsilon}}') IS DISTINCT FROM 'number'
      OR jsonb_typeof(v #> '{{charged,delta}}') IS DISTINCT FROM 'number'
      OR jsonb_typeof(v->'method') IS DISTINCT FROM 'string') THEN
    bad := 'a release without its charge and method';
  END IF;
  IF bad IS NULL AND kind = 'settings' AND (jsonb_typeof(v->'settings') IS DISTINCT FROM 'object'
      OR jsonb_typeof(v #> '{{settings,privacy_unit}}') IS DISTINCT FROM 'object'
      OR jsonb_typeof(v #> '{{settings,accounting,method}}') IS DISTINCT FROM 'string') THEN
    bad := 'settings without their accounting method and unit of privacy';
  END IF;
  IF bad IS NULL AND kind IN ('correction', 'acknowledge', 'import') THEN
    x := CASE WHEN kind = 'correction' THEN v->'releases' ELSE coalesce(v->'carried', '[]') END;
    IF jsonb_typeof(x) IS DISTINCT FROM 'array' OR EXISTS (
        SELECT 1 FROM jsonb_array_elements(x) r WHERE jsonb_typeof(r->'costs') IS DISTINCT FROM 'array') THEN
      bad := format('a %s entry without the costs of its releases', kind);
    END IF;
  END IF;
  IF bad IS NOT NULL THEN
    RAISE EXCEPTION USING ERRCODE = 'DP002', MESSAGE = format('an entry no dpdesk could read back: %s', bad);
  END IF;
END
$f$;

CREATE FUNCTION dpdesk.append(p_dataset text, p_line bytea) RETURNS bigint LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, dpdesk, pg_temp AS $f$
DECLARE
  officer boolean := dpdesk.is_officer();
  body text; v jsonb; h text; member text; ds dpdesk.datasets%ROWTYPE; n bigint; kind text; s jsonb;
  total_e numeric; total_d numeric; rel jsonb; retired boolean; in_force jsonb;
BEGIN
  IF NOT dpdesk.is_curator() THEN
    RAISE EXCEPTION USING ERRCODE = 'DP001', MESSAGE = format('%s is not a curator of this team', session_user);
  END IF;
  IF p_dataset !~ '^ds-[0-9a-f]{{32}}$' THEN
    RAISE EXCEPTION USING ERRCODE = 'DP008', MESSAGE = 'not a dataset id';
  END IF;
  IF length(p_line) > 64 * 1024 * 1024 THEN
    RAISE EXCEPTION USING ERRCODE = 'DP002', MESSAGE = 'an entry larger than 64 MiB';
  END IF;
  IF length(p_line) < 2 OR get_byte(p_line, length(p_line) - 1) <> 10 OR get_byte(p_line, 0) <> 123 THEN
    RAISE EXCEPTION USING ERRCODE = 'DP002', MESSAGE = 'an entry is one line ending in a newline';
  END IF;
  BEGIN
    body := convert_from(substring(p_line FROM 1 FOR length(p_line) - 1), 'UTF8');
    v := body::jsonb;
  EXCEPTION WHEN OTHERS THEN
    IF position('\u0000' IN coalesce(body, '')) > 0 THEN
      RAISE EXCEPTION USING ERRCODE = 'DP002',
        MESSAGE = 'an entry holding the character U+0000, which a team ledger cannot store';
    END IF;
    RAISE EXCEPTION USING ERRCODE = 'DP002', MESSAGE = 'an entry that is not UTF-8 JSON';
  END;
  IF position(E'\n' IN body) > 0 OR jsonb_typeof(v) IS DISTINCT FROM 'object' THEN
    RAISE EXCEPTION USING ERRCODE = 'DP002', MESSAGE = 'an entry is one JSON object on one line';
  END IF;
  h := v->>'hash';
  IF jsonb_typeof(v->'hash') IS DISTINCT FROM 'string' OR h !~ '^[0-9a-f]{{64}}$' THEN
    RAISE EXCEPTION USING ERRCODE = 'DP003', MESSAGE = 'an entry without its hash';
  END IF;
  -- the hash is over the line without its own member, which occurs exactly once (a line whose hash appears in
  -- it twice would need a fixed point of SHA-256)
  member := ',"hash":"' || h || '"';
  IF length(body) - length(replace(body, member, '')) <> length(member) THEN
    RAISE EXCEPTION USING ERRCODE = 'DP003', MESSAGE = 'an entry whose hash is not where canonical JSON puts it';
  END IF;
  IF encode(sha256(convert_to(replace(body, member, ''), 'UTF8')), 'hex') <> h THEN
    RAISE EXCEPTION USING ERRCODE = 'DP003', MESSAGE = 'the entry''s hash is not the SHA-256 of the entry';
  END IF;
  IF v->>'dataset' IS DISTINCT FROM p_dataset OR jsonb_typeof(v->'dataset') IS DISTINCT FROM 'string' THEN
    RAISE EXCEPTION USING ERRCODE = 'DP002', MESSAGE = 'the entry names another dataset';
  END IF;
  IF jsonb_typeof(v->'author') IS DISTINCT FROM 'string' OR v->>'author' IS DISTINCT FROM session_user::text THEN
    RAISE EXCEPTION USING ERRCODE = 'DP005',
      MESSAGE = format('the entry''s author is not the user appending it (%s)', session_user);
  END IF;
  INSERT INTO dpdesk.datasets (dataset, created_by, created) VALUES (p_dataset, session_user, clock_timestamp())
    ON CONFLICT DO NOTHING;
  SELECT * INTO ds FROM dpdesk.datasets WHERE dataset = p_dataset FOR UPDATE;
  IF jsonb_typeof(v->'seq') IS DISTINCT FROM 'number' OR jsonb_typeof(v->'prev') IS DISTINCT FROM 'string' THEN
    RAISE EXCEPTION USING ERRCODE = 'DP002', MESSAGE = 'an entry without its place in the chain';
  END IF;
  IF (v->>'seq')::numeric <> ds.seq + 1 OR v->>'prev' <> ds.head THEN
    RAISE EXCEPTION USING ERRCODE = 'DP004',
      MESSAGE = format('the entry does not follow the dataset''s last entry (%s): another release was recorded first',
                       ds.seq);
  END IF;
  n := ds.seq + 1;
  kind := v->>'type';
  IF kind IN ('simulate', 'migrate', 'moved') THEN
    RAISE EXCEPTION USING ERRCODE = 'DP001', MESSAGE = format('a %s entry is never appended to a team ledger', kind);
  END IF;
  PERFORM dpdesk.check_readable(body, v);
  IF NOT officer AND (kind IN ('govern', 'acknowledge', 'declare_new') OR (kind = 'settings' AND n > 1)) THEN
    RAISE EXCEPTION USING ERRCODE = 'DP001',
      MESSAGE = format('only a privacy officer of this team may append a %s entry (%s is not one)', kind, session_user);
  END IF;
  s := CASE WHEN kind IN ('settings', 'acknowledge', 'merge', 'import') AND jsonb_typeof(v->'settings') = 'object'
            THEN v->'settings' END;
  IF s IS NOT NULL AND kind = 'merge' AND NOT officer AND (ds.method IS NULL
     OR s #>> '{{accounting,method}}' IS DISTINCT FROM ds.method
     OR jsonb_typeof(s #> '{{budget,epsilon}}') IS DISTINCT FROM 'number'
     OR jsonb_typeof(s #> '{{budget,delta}}') IS DISTINCT FROM 'number'
     OR (s #>> '{{budget,epsilon}}')::numeric > ds.budget_epsilon
     OR (s #>> '{{budget,delta}}')::numeric > ds.budget_delta) THEN
    RAISE EXCEPTION USING ERRCODE = 'DP001',
      MESSAGE = format('only a privacy officer of this team may merge under a larger budget or another method (%s is '
                       'not one)', session_user);
  END IF;
  -- an import fixes the budget of a dataset it opens, as a first release does; later it may only lower it
  IF s IS NOT NULL AND kind = 'import' AND NOT officer AND n > 1 AND (ds.method IS NULL
     OR s #>> '{{accounting,method}}' IS DISTINCT FROM ds.method
     OR jsonb_typeof(s #> '{{budget,epsilon}}') IS DISTINCT FROM 'number'
     OR jsonb_typeof(s #> '{{budget,delta}}') IS DISTINCT FROM 'number'
     OR (s #>> '{{budget,epsilon}}')::numeric > ds.budget_epsilon
     OR (s #>> '{{budget,delta}}')::numeric > ds.budget_delta) THEN
    RAISE EXCEPTION USING ERRCODE = 'DP001',
      MESSAGE = format('only a privacy officer of this team may import under a larger budget or another method (%s '
                       'is not one)', session_user);
  END IF;
  -- and besides the budget, a curator's merge or import restates the settings in force (the unit of privacy and the
  -- accounting the team's releases are costed under are an officer's to change, as a later settings entry is)
  IF s IS NOT NULL AND kind IN ('merge', 'import') AND NOT officer AND n > 1 THEN
    SELECT convert_from(substring(x.line FROM 1 FOR length(x.line) - 1), 'UTF8')::jsonb -> 'settings' INTO in_force
      FROM dpdesk.entries x WHERE x.dataset = p_dataset AND x.type IN ('settings', 'acknowledge', 'merge', 'import')
       AND jsonb_typeof(convert_from(substring(x.line FROM 1 FOR length(x.line) - 1), 'UTF8')::jsonb -> 'settings')
           = 'object'
      ORDER BY x.seq DESC LIMIT 1;
    IF in_force IS NULL OR (s - 'budget') IS DISTINCT FROM (in_force - 'budget')
       OR (s -> 'budget') - 'epsilon' - 'delta' IS DISTINCT FROM (in_force -> 'budget') - 'epsilon' - 'delta' THEN
      RAISE EXCEPTION USING ERRCODE = 'DP001',
        MESSAGE = format('only a privacy officer of this team may %s under another unit of privacy or other settings '
                         '(%s is not one)', kind, session_user);
    END IF;
  END IF;
  IF ds.retired AND NOT officer THEN
    RAISE EXCEPTION USING ERRCODE = 'DP001',
      MESSAGE = 'the dataset was merged into another: nothing is appended to it any more';
  END IF;
  IF s IS NOT NULL THEN
    IF jsonb_typeof(s #> '{{budget,epsilon}}') IS DISTINCT FROM 'number'
       OR jsonb_typeof(s #> '{{budget,delta}}') IS DISTINCT FROM 'number'
       OR (s #>> '{{accounting,method}}') NOT IN ('sequential', 'advanced', 'zcdp') THEN
      RAISE EXCEPTION USING ERRCODE = 'DP007', MESSAGE = 'settings without a budget and an accounting method';
    END IF;
    ds.method := s #>> '{{accounting,method}}';
    ds.budget_epsilon := (s #>> '{{budget,epsilon}}')::numeric;
    ds.budget_delta := (s #>> '{{budget,delta}}')::numeric;
  END IF;
  IF kind = 'spend' THEN
    PERFORM dpdesk.book(p_dataset, v->>'release_id', v->'costs', v->'delta_prime', 'spend');
  ELSIF kind = 'correction' AND jsonb_typeof(v->'releases') = 'array' THEN
    FOR rel IN SELECT * FROM jsonb_array_elements(v->'releases') LOOP
      PERFORM dpdesk.book(p_dataset, rel->>'release_id', rel->'costs', rel->'delta_prime', 'correction');
    END LOOP;
  ELSIF kind IN ('acknowledge', 'merge', 'import') AND jsonb_typeof(v->'carried') = 'array' THEN
    FOR rel IN SELECT * FROM jsonb_array_elements(v->'carried') LOOP
      PERFORM dpdesk.book(p_dataset, coalesce(rel->>'release_id', 'carried-' || n || '-' || md5(rel::text)),
                          rel->'costs', rel->'delta_prime', 'carried');
    END LOOP;
  END IF;
  IF kind = 'checkpoint' THEN
    PERFORM dpdesk.check_checkpoint(p_dataset, v, ds);
  END IF;
  IF kind = 'spend' THEN
    IF ds.method IS NULL THEN
      RAISE EXCEPTION USING ERRCODE = 'DP007', MESSAGE = 'a release before the dataset''s budget was fixed';
    END IF;
    BEGIN
      SELECT sp.epsilon, sp.delta INTO total_e, total_d FROM dpdesk.spent(p_dataset, ds.method, ds.budget_delta) sp;
    EXCEPTION WHEN OTHERS THEN
      RAISE EXCEPTION USING ERRCODE = 'DP007', MESSAGE = 'the dataset''s total cannot be computed from its entries';
    END;
    IF total_e IS NULL OR total_e > ds.budget_epsilon OR total_d > ds.budget_delta THEN
      RAISE EXCEPTION USING ERRCODE = 'DP006',
        MESSAGE = format('the release would spend more than the dataset''s budget (%s: epsilon %s of %s, delta %s of %s)',
                         ds.method, round(coalesce(total_e, -1), 6), ds.budget_epsilon,
                         total_d, ds.budget_delta);
    END IF;
  END IF;
  INSERT INTO dpdesk.entries VALUES (p_dataset, n, p_line, h, kind, session_user, clock_timestamp());
  UPDATE dpdesk.datasets SET seq = n, head = h, method = ds.method, budget_epsilon = ds.budget_epsilon,
    budget_delta = ds.budget_delta, retired = ds.retired OR kind = 'merged_into' WHERE dataset = p_dataset;
  RETURN n;
END
$f$;

-- every dataset of the team with its budget, its spent total under its method (from the releases' stated costs,
-- as the append function computes it) and its number of releases: what dpdesk team status shows to the team's
-- curators, officers and auditors (the releases table is the owner's; this reads it for them, nothing else)
CREATE OR REPLACE FUNCTION dpdesk.overview()
RETURNS TABLE (o_dataset text, o_seq bigint, o_method text, o_budget_epsilon numeric, o_budget_delta numeric,
               o_retired boolean, o_spent_epsilon numeric, o_spent_delta numeric, o_releases bigint)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, dpdesk, pg_temp AS $f$
  SELECT d.dataset, d.seq, d.method, d.budget_epsilon, d.budget_delta, d.retired, s.epsilon, s.delta,
         (SELECT count(*) FROM dpdesk.releases r WHERE r.dataset = d.dataset)
    FROM dpdesk.datasets d LEFT JOIN LATERAL dpdesk.spent(d.dataset, d.method, d.budget_delta) s ON true
   WHERE d.seq > 0 ORDER BY d.created, d.dataset
$f$;
-- the chain of a dataset, in order (for curators, officers and auditors)
CREATE VIEW dpdesk.chain AS SELECT dataset, seq, line, hash, type, appended_by, appended FROM dpdesk.entries;

REVOKE ALL ON ALL TABLES IN SCHEMA dpdesk FROM PUBLIC;
REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA dpdesk FROM PUBLIC;
GRANT USAGE ON SCHEMA dpdesk TO {prefix}_curator, {prefix}_officer, {prefix}_auditor;
GRANT SELECT ON dpdesk.entries, dpdesk.datasets, dpdesk.chain TO {prefix}_curator, {prefix}_officer, {prefix}_auditor;
GRANT SELECT (schema_version, prefix, created) ON dpdesk.team TO {prefix}_curator, {prefix}_officer, {prefix}_auditor;
GRANT EXECUTE ON FUNCTION dpdesk.append(text, bytea), dpdesk.claim(text, text, text, text), dpdesk.dataset_of(text),
  dpdesk.sketches(integer), dpdesk.sketch_schemes(), dpdesk.secret(), dpdesk.try_lock(text), dpdesk.unlock(text)
  TO {prefix}_curator, {prefix}_officer;
GRANT EXECUTE ON FUNCTION dpdesk.rho_to_epsilon(numeric, numeric), dpdesk.is_curator(), dpdesk.is_officer(),
  dpdesk.overview() TO {prefix}_curator, {prefix}_officer, {prefix}_auditor;
RESET ROLE;
REVOKE {prefix}_owner FROM CURRENT_USER;
-- nobody needs temporary tables here (a session's temporary schema could shadow type names)
DO $temp$ BEGIN EXECUTE format('REVOKE TEMPORARY ON DATABASE %I FROM PUBLIC', current_database()); END $temp$;
COMMIT;
"""

# gen_random_bytes needs pgcrypto; gen_random_uuid() is core from PostgreSQL 13: two of them make 32 random bytes
_RANDOM_KEY_SQL = "decode(replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''), 'hex')"


def schema_sql(prefix: str = "dpdesk") -> str:
    """The SQL that creates the team ledger with roles ``<prefix>_*`` (``dpdesk team init --print-sql``)."""
    if not PREFIX_RE.fullmatch(prefix):
        raise ValueError(prefix)
    return _SQL.format(
        version=SCHEMA_VERSION, prefix=prefix, max_sketch=MAX_SKETCH_BYTES, max_sketches=MAX_SKETCHES
    ).replace("gen_random_bytes_32()", _RANDOM_KEY_SQL)


#: the upgrade's first check (``version``: this schema's, an int)
_NO_DOWNGRADE = (
    "DO $v$ BEGIN IF (SELECT schema_version FROM dpdesk.team) > {version:d} THEN RAISE EXCEPTION "
    "'this team ledger has a newer schema than version {version:d}: nothing was changed'; END IF; END $v$;"
)


def upgrade_sql(prefix: str = "dpdesk") -> str:
    """The SQL that brings a team ledger made by an older dpdesk to this schema (``dpdesk team init`` on a database
    that holds one): the same text as :func:`schema_sql`, made idempotent. Its tables are made when missing (a team
    from before the sketches lacks ``dpdesk.sketches``), every function and the view are replaced, the grants are
    given again and the version recorded; the entries, the releases, the keys and the secret are kept as they are.
    Running it twice changes nothing the second time."""
    full = schema_sql(prefix)
    start = full.index("CREATE TABLE dpdesk.datasets")
    end = full.index("RESET ROLE;")
    body = full[start:end]
    body = body.replace("CREATE TABLE dpdesk.", "CREATE TABLE IF NOT EXISTS dpdesk.")
    # a column added to a table since the first schema: the functions below read it (a team made before merges
    # knew no merged dataset, so none is retired)
    entries_table = body.index("CREATE TABLE IF NOT EXISTS dpdesk.entries")
    body = (
        body[:entries_table]
        + "ALTER TABLE dpdesk.datasets ADD COLUMN IF NOT EXISTS retired boolean NOT NULL DEFAULT false;\n\n"
        + body[entries_table:]
    )
    body = body.replace("CREATE FUNCTION dpdesk.", "CREATE OR REPLACE FUNCTION dpdesk.")
    body = body.replace("CREATE VIEW dpdesk.", "CREATE OR REPLACE VIEW dpdesk.")
    # the prefix was checked by schema_sql (PREFIX_RE): a plain name, never SQL
    head = [
        f"-- dpdesk team ledger: upgrade to schema version {SCHEMA_VERSION}; roles prefixed {prefix}_",
        "BEGIN;",
        f"GRANT {prefix}_owner TO CURRENT_USER;",
        f"SET LOCAL ROLE {prefix}_owner;",
        "LOCK TABLE dpdesk.datasets IN EXCLUSIVE MODE;",
        # never a downgrade: a team ledger of a newer schema keeps its functions (the script, run by hand, stops)
        _NO_DOWNGRADE.format(version=SCHEMA_VERSION),
        # the older schemas' forms of functions whose arguments changed since: replaced below under their new
        # arguments, the old ones would stay beside them with their grants
        "DROP FUNCTION IF EXISTS dpdesk.book(text, text, jsonb, jsonb);",
        "DROP FUNCTION IF EXISTS dpdesk.claim(text, text);",
        "DROP FUNCTION IF EXISTS dpdesk.claim(text, text, text);",
    ]
    tail = [
        f"UPDATE dpdesk.team SET schema_version = {SCHEMA_VERSION:d};",  # noqa: S608 (a constant)
        "RESET ROLE;",
        f"REVOKE {prefix}_owner FROM CURRENT_USER;",
        "COMMIT;",
    ]
    return "\n".join(head) + "\n" + body + "\n".join(tail) + "\n"
