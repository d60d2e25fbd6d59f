"""What the tests and the scripts in bench/ and eval/ share, so that none of them imports
another: the adapter from measured cases to a Workload (`cases`), the answer invariants and
the generated questions they run over, the real-lines check, and the drivers of the load
and durability benches (`load`, `durability`), whose short runs are tests."""
