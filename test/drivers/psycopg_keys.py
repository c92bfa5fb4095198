"""Keys from application code through psycopg 3, as users pass them.

Run by test/t/024_drivers.pl with a connection string; prints one line per
check, "ok <name>" or "not ok <name>: <why>", in text and in binary mode.
Every parameter is whatever psycopg sends for a plain Python value: an
untyped (unknown) str in text mode, text in binary mode, int as the
smallest integer type, Decimal as numeric, float as float8, UUID as uuid.
"""
import decimal
import sys
import uuid

import psycopg

USER_UUID = uuid.UUID("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11")


def check(name, got, want):
    if got == want:
        print(f"ok {name}")
    else:
        print(f"not ok {name}: got {got!r}, want {want!r}")


def run(conn, binary):
    mode = "binary" if binary else "text"
    cur = conn.cursor(binary=binary)

    def one(query, params):
        cur.execute(query, params, binary=binary)
        return cur.fetchone()[0]

    asked = "SELECT tlbf_contains(f, %s) FROM driver_filters WHERE name = %s"
    for key, want, what in [
        (42, True, "int"), ("42", True, "str"), (decimal.Decimal("42"), True, "Decimal"),
        (42.0, True, "float"), (4242, False, "absent int"), ("4242", False, "absent str"),
        (decimal.Decimal("42.5"), False, "Decimal not an integer"),
        (2**40, False, "int8-sized int"),
    ]:
        check(f"{mode}: integer filter asked with {what}", one(asked, (key, "ints")), want)
    check(f"{mode}: uuid filter asked with UUID", one(asked, (USER_UUID, "uuids")), True)
    check(f"{mode}: uuid filter asked with str", one(asked, (str(USER_UUID), "uuids")), True)
    check(f"{mode}: text filter asked with str", one(asked, ("alice", "texts")), True)
    check(f"{mode}: bytea filter asked with bytes", one(asked, (b"\x01\x02", "bytes")), True)

    # a key of another kind is refused with 42804, not answered false
    try:
        one(asked, (USER_UUID, "ints"))
        check(f"{mode}: uuid key for an integer filter", "answered", "42804")
    except psycopg.errors.DatatypeMismatch:
        check(f"{mode}: uuid key for an integer filter", "42804", "42804")
    conn.rollback()

    # writes: tlbf_add from a parameter, then asked again; the shared
    # filter's atomic test-and-add
    cur.execute("UPDATE driver_filters SET f = tlbf_add(f, %s) WHERE name = %s",
                ("1001", "ints"), binary=binary)
    check(f"{mode}: added str found as int", one(asked, (1001, "ints")), True)
    first = one("SELECT tlbf_shared_add('driver', %s)", (f"{mode}-key",))
    again = one("SELECT tlbf_shared_add('driver', %s)", (f"{mode}-key",))
    check(f"{mode}: shared test-and-add", (first, again), (True, False))
    check(f"{mode}: shared contains", one("SELECT tlbf_shared_contains('driver', %s)",
                                          (f"{mode}-key",)), True)
    # a filter fetched comes back as str (text mode) or bytes (binary
    # mode); passed back, a cast to tlbf takes either
    cur.execute("SELECT f FROM driver_filters WHERE name = %s", ("ints",), binary=binary)
    fetched = cur.fetchone()[0]
    check(f"{mode}: a fetched filter is {'bytes' if binary else 'str'}",
          isinstance(fetched, bytes if binary else str), True)
    check(f"{mode}: a fetched filter passed back with ::tlbf",
          one("SELECT tlbf_contains(%s::tlbf, %s)", (fetched, "42")), True)
    # a key of two columns, as a two-column dedup trigger saw it
    pair = "SELECT tlbf_shared_contains_fields('pairs', %s, %s)"
    check(f"{mode}: two-column key from its fields", one(pair, ("7", "42")), True)
    check(f"{mode}: another two-column key", one(pair, ("7", "43")), False)
    check(f"{mode}: probability", one("SELECT tlbf_probability(f, %s, prior => %s) > 0 "
                                      "FROM driver_filters WHERE name = %s",
                                      ("42", 0.5, "ints")), True)
    conn.commit()


def main():
    with psycopg.connect(sys.argv[1]) as conn:
        run(conn, binary=False)
        run(conn, binary=True)


if __name__ == "__main__":
    main()
