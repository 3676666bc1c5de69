"""The word processor's task templates (importing this module registers them in `TASKS`).

Eight atomic templates (`atomic.py`: format a word, paragraph style, alignment, replace, save as, one
page setting, font size, insert a table), six composed ones (`composed.py`: make a list, centered title,
replace then format, a table with a header row, append and save, page layout) and four long ones
(`long.py`: a structured report, a checklist, a section with a table, an editing pass), each long one
checked on the file it was saved to. Checkers read `getState()`: `blocks` (paragraphs with style, alignment,
list and formatted runs; tables), `saved` (file name -> format, blocks, text, page setup) and `pageSetup`.
"""

from raygent.environments.web.apps.word_processor.tasks import atomic, composed, long

__all__ = ["atomic", "composed", "long"]
