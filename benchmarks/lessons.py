"""Generate large, valid lessons for benchmarks: every kind of item, both languages."""

from __future__ import annotations

from pathlib import Path

SHIPPED = Path(__file__).resolve().parent.parent / "decks" / "bert-basics.toml"


def generated_lesson(items: int, lesson_id: str = "generated") -> str:
    """A lesson of ``items`` items built on the shipped lesson's parameters and formulas."""
    shipped = SHIPPED.read_text(encoding="utf-8")
    head = shipped[: shipped.index("[[item]]")].replace('id = "bert-basics"', f'id = "{lesson_id}"')
    makers = [_fact, _choice, _blank, _numeric, _match]
    return head + "".join(makers[i % len(makers)](i) for i in range(items))


def _fact(i: int) -> str:
    return f'''
[[item]]
id = "fact-{i}"
kind = "fact"
tags = ["generated"]
question = {{ en = "Question {i}: what does BERT's layer {i % 12} see?", tr = "Soru {i}: BERT'in {i % 12}. katmanı neyi görür?" }}
answer = {{ en = "The whole sentence, left and right ({i}).", tr = "Tüm cümleyi, sol ve sağ ({i})." }}
explanation = {{ en = "Bidirectional attention.", tr = "Çift yönlü dikkat." }}
'''


def _choice(i: int) -> str:
    return f'''
[[item]]
id = "choice-{i}"
kind = "choice"
prompt = {{ en = "Choice {i}: which is bidirectional?", tr = "Seçim {i}: hangisi çift yönlü?" }}
options = {{ en = ["GPT", "BERT", "RNN", "LSTM"], tr = ["GPT", "BERT", "RNN", "LSTM"] }}
answer = 2
'''


def _blank(i: int) -> str:
    return f'''
[[item]]
id = "blank-{i}"
kind = "blank"
prompt = {{ en = "Blank {i}: count attention's projections.", tr = "Boşluk {i}: dikkatin projeksiyonlarını say." }}
text = "dikkat = ____ * (d * d + d)"
answer = "4"
checks = "attention"
'''


def _numeric(i: int) -> str:
    return f'''
[[item]]
id = "numeric-{i}"
kind = "numeric"
prompt = {{ en = "Numeric {i}: parameters of {{set}}?", tr = "Sayısal {i}: {{set}} parametreleri?" }}
formula = "total"
params = ["bert-base", "bert-large"]
stated = {{ bert-base = 109482240 }}
'''


def _match(i: int) -> str:
    return f'''
[[item]]
id = "match-{i}"
kind = "match"
prompt = {{ en = "Match {i}.", tr = "Eşleştir {i}." }}
params = "bert-base"
pairs = [
    {{ id = "layers", term = {{ en = "layer", tr = "katman" }}, value = "n" }},
    {{ id = "width", term = {{ en = "d_model", tr = "d_model" }}, value = "d" }},
]
'''
