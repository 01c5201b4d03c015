"""The refiner's answer applied in code: a whole script sent back must keep its ids."""

from __future__ import annotations

from podcast import refiner
from podcast.models import Chapter, PodcastScript, ScriptTurn


def _script() -> PodcastScript:
    texts = ["Hello.", "Markets: S&P 500 at 3,557.54.", "Theme.", "NVDA first.", "Middle.",
             "NVDA verdict HOLD.", "Bye."]
    speakers = ["host", "analyst", "host", "host", "analyst", "analyst", "host"]
    return PodcastScript(
        date="20250214", user_tickers=["NVDA"],
        chapter=[Chapter(name="opening", start_id=0, end_id=1),
                 Chapter(name="theme", start_id=2, end_id=2),
                 Chapter(name="ticker:NVDA", start_id=3, end_id=5),
                 Chapter(name="closing", start_id=6, end_id=6)],
        scripts=[ScriptTurn(id=i, speaker=s, text=t)
                 for i, (s, t) in enumerate(zip(speakers, texts, strict=True))])


def test_whole_script_reordered_is_rejected_and_kept_ids_become_edits():
    script = _script()
    assert script.transitions() == [0, 1, 2, 3, 5, 6]
    rows = [{"id": t.id, "speaker": t.speaker, "text": t.text} for t in script.scripts]
    swapped = [rows[1], rows[0], *rows[2:]]
    same, notes = refiner.apply(script, {"scripts": swapped})
    assert same == script and notes[0].kind == "rejected_edit" and "reordered" in notes[0].text
    shorter, notes = refiner.apply(script, {"scripts": rows[:-1]})
    assert shorter == script and "removed" in notes[0].text

    rows[3] = rows[3] | {"text": "Now to NVIDIA."}
    rows[4] = rows[4] | {"text": "A new middle."}
    rows[1] = rows[1] | {"text": "Markets: the S&P 500 sat at 3,557.54."}
    out, notes = refiner.apply(script, {"scripts": rows})
    assert out.scripts[3].text == "Now to NVIDIA." and out.scripts[4].text == "Middle."
    assert out.scripts[1].text == "Markets: the S&P 500 sat at 3,557.54."
    assert [(n.kind, n.turn_id) for n in notes] == [
        ("edit", 1), ("edit", 3), ("rejected_edit", 4)]


def test_unusable_answers_leave_the_script_alone():
    script = _script()
    for data in ({"edits": "none"}, ["not", "an", "object"], {"text": "hi"}):
        out, notes = refiner.apply(script, data)
        assert out == script and [n.kind for n in notes] == ["refiner"]
    out, notes = refiner.apply(script, {"edits": [{"id": "3", "speaker": "主持人",
                                                   "text": "接下来是英伟达。"}]})
    assert out.scripts[3].text == "接下来是英伟达。" and out.scripts[3].speaker == "host"
    out, notes = refiner.apply(script, {"edits": [{"id": True, "speaker": "host",
                                                   "text": "x"}, "junk"]})
    assert out == script and [n.kind for n in notes] == ["rejected_edit", "rejected_edit"]
