"""SEAgent's World State Model (`wsm.py`) and its parts: screen-change captions (`screens.py`), the fine-tuned
yes/no judge of the laptop path (`lm_judge.py`) and the VLM judge's prompt and parser (`prompt.py`)."""
