"""The documentation site of the web suite (DocOS): how-to pages for the five apps, written per UI seed.

The apps' menus are randomized per seed (`ui.py`), so the procedures live here rather than in a model's memory:
every page names the menu, label and shortcut the app shows under the seed in its URL (`?seed=N`), and a
search page ranks pages by BM25. `site.render(path, query, seed)` is a pure function the app server calls for
`/docs/...` (`site.mount(server)` adds the route); `urls.target_url_inclusion` is DocOS's TUI metric over an
episode's `info["visited_urls"]`.

Modules: `model.py` (what a guide holds), `guides/` (one guide per app), `markup.py` (guide text for a seed),
`pages.py` (every page of a seed), `search.py` (BM25), `layout.py` (the HTML frame), `site.py` (the request
entry point), `urls.py` (paths and TUI). How it differs from DocOS: the paper's documentation is the open web
for 20 desktop applications; here it is one local site for five local apps, and its layout moves with the seed.
"""
