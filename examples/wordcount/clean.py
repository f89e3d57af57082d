"""wordcount: remove links, @mentions, numbers, one-letter words and the identified language's stop words.

Input from identify_language: {"text", "language"}. Output to `count`: {"language", "words", "links"}.
"""

from stopwords import LINK, MENTION, STOP, WORD


def handle(event, context):
    text, language = event["text"], event["language"]
    links = LINK.findall(text)
    text = MENTION.sub(" ", LINK.sub(" ", text))
    stop = STOP.get(language, frozenset())
    words = [w for w in WORD.findall(text.lower()) if len(w) > 1 and w not in stop]
    context.log(f"removed {len(links)} link(s); {len(words)} word(s) left")
    return {"language": language, "words": words, "links": len(links)}
