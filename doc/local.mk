# Documentation installed under $(docdir).

dist_doc_DATA += \
	doc/guide.md \
	doc/design.md \
	doc/building.md \
	doc/collections.md \
	doc/flowspec.md \
	doc/modules.md \
	doc/results.md \
	doc/stats.md \
	doc/stats.schema.json
