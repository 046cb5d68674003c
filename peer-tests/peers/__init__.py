"""The comparison tier: Huawei's programs and ours, run on the same simulated host, their outputs compared.

See peer-tests/README.md. Standard library only, so the tier runs wherever Python 3.11 does.
"""
