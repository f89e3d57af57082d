"""The wordcount example (paper §7) in the emulator: language id -> links and stop words out -> word
frequency list of this text and of all texts so far, kept in the data layer per language."""

from __future__ import annotations

from pathlib import Path

from sandemu import Emulator

WORDCOUNT = Path(__file__).resolve().parent.parent / "examples" / "wordcount"


def test_pipeline_and_running_totals_per_language() -> None:
    with Emulator(WORDCOUNT, echo=lambda line: None) as e:
        first, run = e.invoke({"text": "The cat and the dog: the cat wins! https://t.co/x @bob www.x.org"})
        second, _ = e.invoke({"text": "A dog is a dog, and a cat is a cat, and that is that."})
        german, _ = e.invoke({"text": "Der Hund und die Katze sind nicht im Haus, die Katze ist im Garten."})
        bare, _ = e.invoke("12345 !!!")
        grains = [r["grain"] for r in e.reports if r["execution_id"] == run]
    assert grains == ["identify_language", "clean", "count"]
    assert first == {
        "language": "en",
        "words": 4,
        "links": 2,
        "top": [["cat", 2], ["dog", 1], ["wins", 1]],
        "texts": 1,
        "top_all": [["cat", 2], ["dog", 1], ["wins", 1]],
    }
    assert second["top"] == [["cat", 2], ["dog", 2]]
    assert second["texts"] == 2 and second["top_all"] == [["cat", 4], ["dog", 3], ["wins", 1]]
    assert german["language"] == "de" and german["texts"] == 1
    assert german["top"] == [["katze", 2], ["garten", 1], ["haus", 1], ["hund", 1]]
    assert bare == {"language": "und", "words": 0, "links": 0, "top": [], "texts": 1, "top_all": []}


def test_bad_input_is_an_error_event() -> None:
    with Emulator(WORDCOUNT, echo=lambda line: None) as e:
        result, _ = e.invoke({"no_text": 1})
    assert result["error"]["grain"] == "identify_language" and result["error"]["type"] == "ValueError"
