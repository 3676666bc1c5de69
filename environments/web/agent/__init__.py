"""The suite as a text agent sees it, shared by every web-agent job (web_agent, SEAgent, XSkill, DocOS).

`observation.py` the compact page text; `env.py` `CompactWebEnv` (`raygent/web-agent-v0`) and the per-thread
browsers; `demos.py` the scripted experts' demonstrations, recorded in Chromium and cached; `tasks.py` the task
pools and splits (`splits.py`), the task source `web_tasks` and the tokenizer corpus; `hindsight.py` the goals an
episode achieved on the way; `screens.py` screenshots of trajectories for reports; `spec.py` one registered
environment per app. No Ray here: the trainer-side parts (hooks, recipes) are the jobs'.
"""
