"""The transport comparison (scripts/compare_transports.py), one module per
section: echo, rate, rate_procs, ttcp, idle and loss each run their part and
print their tables; processes holds the child processes and the client runs
all of them share; targets reads examples/targets.tsv and gives the verdicts;
report writes the Markdown, CSV and JSON; guarded runs a script's Runner.
cross_host is the section between two hosts (scripts/two_hosts.sh): hosts
drives the script, cross_host_context runs servers in one host and clients
in the other, cross_host_sections holds bench_wire, echo and rate there."""
