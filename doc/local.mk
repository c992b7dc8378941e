# Documentation installed under $(docdir).

dist_doc_DATA += \
	doc/design.md \
	doc/building.md \
	doc/collections.md \
	doc/modules.md \
	doc/results.md
