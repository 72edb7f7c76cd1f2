"""Alexiou, Bouras & Papazois: TFMCC and PGMCC over UMTS MBMS, legacy and modified with
the Node-B loss indication. `topology.table1` builds the paper's Table I network."""
