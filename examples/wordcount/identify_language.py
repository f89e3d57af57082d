"""wordcount (paper §7, stream analytics of tweets): guess the text's language from its stop words.

Input: {"text": "..."} (or the text as a JSON string). Output to `clean`: {"text", "language", "scores"}.
The guess is the language whose stop words occur most often; ties go to the first in LANGUAGES, and a
text with no stop word at all is "und" (undetermined). Deterministic, standard library only.
"""

from stopwords import LANGUAGES, LINK, STOP, WORD


def handle(event, context):
    text = event.get("text") if isinstance(event, dict) else event
    if not isinstance(text, str):
        raise ValueError('expected {"text": "..."} or a JSON string')
    words = WORD.findall(LINK.sub(" ", text).lower())
    scores = {lang: sum(1 for w in words if w in STOP[lang]) for lang in LANGUAGES}
    best = max(LANGUAGES, key=lambda lang: (scores[lang], -LANGUAGES.index(lang)))
    language = best if scores[best] > 0 else "und"
    context.log(f"language {language} (stop words per language: {scores})")
    return {"text": text, "language": language, "scores": scores}
