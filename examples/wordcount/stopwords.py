"""wordcount: stop words per language and the word/link patterns, shared by identify_language and clean.

Not a grain: `sand deploy` ships it in a zip with the entry grain, and every grain of the application
imports it from the same code folder.
"""

import re

# Kept short on purpose: the most frequent function words tell these languages apart well.
STOP_WORDS = {
    "en": "a about an and are as at be but by for from has have he her his i in is it its not of on or "
    "our she so that the their they this to was we were what when which who will with you your don "
    "doesn didn isn wasn",
    "de": "aber als am auch auf aus bei bin bis das dass dem den der des die ein eine einen er es für hat "
    "ich ihr im in ist ja mit nicht noch nur oder sie sind so und uns von war was wir wie zu",
    "fr": "au aux avec ce ces dans de des du elle en est et il ils je la le les leur mais ne nous on ou "
    "par pas pour qu que qui sa se ses son sur un une vous c d j l n s",
    "es": "al como con de del el ella ellos en es esta este fue ha hay la las le lo los más mi no nos o "
    "para pero por que se si sin son su sus también un una y ya",
}
LANGUAGES = tuple(STOP_WORDS)  # the order breaks ties
STOP = {lang: frozenset(words.split()) for lang, words in STOP_WORDS.items()}
WORD = re.compile(r"[^\W\d_]+")  # letters only: numbers and punctuation split words
LINK = re.compile(r"(?:https?://|www\.)\S+", re.IGNORECASE)
MENTION = re.compile(r"(?<!\w)@\w+")
