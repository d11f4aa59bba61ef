"""Generated lessons for benchmarks: TOML text built in code, any number of items.

Every kind appears in about the shipped lesson's proportions, in English and
Turkish, with numbers that verify, so the text goes through the real parser:

    from generated import lesson_toml
    lesson = bertdrill.lesson.parse(lesson_toml(10_000), "generated.toml")
"""

from __future__ import annotations

HEADER = """\
[lesson]
id = "generated"
languages = ["en", "tr"]
title = {{ en = "Generated lesson ({items} items)", tr = "Üretilmiş ders ({items} öğe)" }}
summary = {{ en = "A lesson built in code for benchmarks.", tr = "Kıyaslamalar için kodla kurulmuş bir ders." }}
source = {{ en = "benchmarks/generated.py", tr = "benchmarks/generated.py" }}
tags = ["generated", "benchmark"]

[params.small]
title = "Small"
d = 768
f = 3072
n = 12
h = 12

[params.large]
title = "Large"
d = 1024
f = 4096
n = 24
h = 16

[formulas]
attention = "4 * (d * d + d)"
ffn = "d * f + f + f * d + d"
layer = "attention + 2 * d + ffn + 2 * d"
head_size = "d / h"
"""

# One template per kind; {i} makes every item's id and text its own.
FACT = """
[[item]]
id = "fact-{i}"
kind = "fact"
tags = ["facts"]
question = {{ en = "Question {i}: what does an encoder layer hold?", tr = "Soru {i}: bir encoder katmanında ne vardır?" }}
answer = {{ en = "Attention, a feed-forward network and two LayerNorms (item {i}).", tr = "Dikkat, ileri beslemeli ağ ve iki LayerNorm (öğe {i})." }}
explanation = {{ en = "Layer = attention + 2d + FFN + 2d; in Small that is {{layer@small}}.", tr = "Katman = dikkat + 2d + FFN + 2d; Small için {{layer@small}}." }}
"""

CHOICE = """
[[item]]
id = "choice-{i}"
kind = "choice"
prompt = {{ en = "Choice {i}: which part holds most parameters?", tr = "Seçim {i}: parametrelerin çoğu hangi bölümdedir?" }}
options = {{ en = ["Attention", "The FFN", "LayerNorm", "Pooler"], tr = ["Dikkat", "FFN", "LayerNorm", "Pooler"] }}
answer = 2
explanation = {{ en = "About two thirds of each layer.", tr = "Her katmanın yaklaşık üçte ikisi." }}
"""

BLANK = """
[[item]]
id = "blank-{i}"
kind = "blank"
prompt = {{ en = "Blank {i}: count the projections.", tr = "Boşluk {i}: projeksiyonları say." }}
text = "attention = ____ * (d * d + d)"
answer = "4"
checks = "attention"
"""

NUMERIC = """
[[item]]
id = "numeric-{i}"
kind = "numeric"
prompt = {{ en = "Numeric {i}: parameters in one layer of {{set}}?", tr = "Sayısal {i}: {{set}} modelinin bir katmanında kaç parametre var?" }}
formula = "layer"
params = ["small", "large"]
stated = {{ small = 7087872 }}
"""

MATCH = """
[[item]]
id = "match-{i}"
kind = "match"
prompt = {{ en = "Match {i}: the Small settings.", tr = "Eşleştir {i}: Small ayarları." }}
params = "small"
pairs = [
    {{ id = "layers", term = {{ en = "layers", tr = "katman" }}, value = "n" }},
    {{ id = "width", term = {{ en = "d_model", tr = "d_model" }}, value = "d" }},
    {{ id = "heads", term = {{ en = "heads", tr = "baş" }}, value = "h" }},
]
"""

PRACTICE = '''
[[item]]
id = "practice-{i}"
kind = "practice"
prompt = {{ en = "Practice {i}: print one layer's size.", tr = "Alıştırma {i}: bir katmanın boyutunu yazdır." }}
params = "small"
starter = """
d, f = 768, 3072
"""
solution = """
d, f = 768, 3072
print(4 * (d * d + d) + 2 * d + d * f + f + f * d + d + 2 * d)
"""
expected = [["layer"]]
'''

# Twenty items in the mix of the shipped lesson: mostly facts and numbers.
MIX = [FACT] * 9 + [NUMERIC] * 6 + [MATCH] * 2 + [CHOICE, BLANK, PRACTICE]


def lesson_toml(items: int) -> str:
    """The TOML text of a valid lesson with ``items`` items."""
    parts = [HEADER.format(items=items)]
    parts += [MIX[i % len(MIX)].format(i=i) for i in range(items)]
    return "".join(parts)
