"""wordcount: compile the word frequency list of this text and of every text so far (per language).

Each execution stores its own counts as one entry of the data-layer map `counts-<language>`, keyed by its
execution id, and the list of all texts is the sum over that map. Every instance writes only its own
entry, so texts counted in parallel never lose an update (a shared read-modify-write entry per word
would), and a re-run of the same execution (recovery) overwrites its entry instead of counting twice.

Output: {"language", "words": <words counted>, "links": <links removed>, "top": [[word, n], ...] of this
text, "texts": <texts so far in this language>, "top_all": [[word, n], ...] of all of them}.
"""

import json
from collections import Counter

TOP = 5
TOP_ALL = 10


def ranked(counts, n):
    # Most frequent first, then alphabetical: the same input always gives the same list.
    return [[w, c] for w, c in sorted(counts.items(), key=lambda wc: (-wc[1], wc[0]))[:n]]


def handle(event, context):
    language, words = event["language"], event["words"]
    mine = Counter(words)
    table = f"counts-{language}"
    context.putMapEntry(table, context.get_execution_id(), json.dumps(mine))
    total = Counter()
    texts = context.retrieveMap(table)
    for counts in texts.values():
        total.update(json.loads(counts))
    context.log(f"{len(words)} word(s) in this text, {len(total)} distinct in {len(texts)} {language} text(s)")
    return {
        "language": language,
        "words": len(words),
        "links": event["links"],
        "top": ranked(mine, TOP),
        "texts": len(texts),
        "top_all": ranked(total, TOP_ALL),
    }
