# Flow specs shipped with River, installed to $(pkgdatadir)/flows:
# `river run $(pkgdatadir)/flows/sort_demo.yaml` after make install.
flowsdir = $(pkgdatadir)/flows
dist_flows_DATA = flows/sort_demo.yaml flows/sort.yaml flows/join.yaml flows/sort_merge.yaml \
	flows/join_replicated.yaml
