"""``bertdrill stats --calibration``: the figures of the pure calibration, on the learner's own log."""

from __future__ import annotations

import json

import pytest
from learner_store import learner_store

from bertdrill.core.scheduling.calibration import out_of_sample, verdict


@pytest.fixture
def year(isolated_home):
    isolated_home.mkdir(parents=True, exist_ok=True)
    return learner_store(isolated_home / "bertdrill.db")


def expected_report(logs):
    return out_of_sample([logs[card_id] for card_id in sorted(logs)])


def test_with_no_history_there_is_not_enough_yet(cli):
    result = cli("stats", "--calibration")
    assert result.exit_code == 0, result.output
    assert result.stdout == (
        "Calibration: how well each scheduler predicts your recall\n\n"
        "Not enough history yet: 0 of the 100 reviews a fair comparison needs "
        "(a review counts when the card was also reviewed on an earlier day).\n")


def test_the_screen_shows_the_schedulers_beside_the_baseline(cli, year):
    report = expected_report(year)
    fitted, fsrs, sm2 = sorted(report.scores, key=lambda score: score.log_loss)
    result = cli("stats", "--calibration")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[2] == (f"{report.reviews} reviews scored (each the first answer of a day to a card also answered on "
                        f"an earlier day); you recalled {report.recall * 100:.1f}% of them.")
    assert lines[4:9] == ["                log loss   RMSE (bins)     AUC",
                          f"FSRS*             {fitted.log_loss:6.3f}        {fitted.rmse_bins:6.3f}   {fitted.auc:.3f}",
                          f"FSRS              {fsrs.log_loss:6.3f}        {fsrs.rmse_bins:6.3f}   {fsrs.auc:.3f}",
                          f"SM-2              {sm2.log_loss:6.3f}        {sm2.rmse_bins:6.3f}   {sm2.auc:.3f}",
                          f"your average      {report.baseline.log_loss:6.3f}        {report.baseline.rmse_bins:6.3f}"
                          "   0.500"]
    assert (fitted.name, fsrs.name) == ("fsrs-fitted", "fsrs")  # on this learner too, fitted FSRS predicts best
    assert "FSRS: predicted against observed recall" in lines
    assert "SM-2: predicted against observed recall" in lines
    for row in fsrs.table:
        band = f"{row.low * 100:.0f}–{row.high * 100:.0f}%"
        assert (f"  {band:<12}{row.predicted * 100:>9.1f}%{row.observed * 100:>9.1f}%{row.count:>10,}") in lines
    assert lines[-1] == verdict(report) and lines[-1].startswith("FSRS* predicts your recall better: log loss ")


def test_turkish_writes_the_figures_with_a_decimal_comma(cli, year):
    report = expected_report(year)
    fitted = min(report.scores, key=lambda score: score.log_loss)
    lines = cli("stats", "--calibration", "--lang", "tr").stdout.splitlines()
    comma = lambda value, places: f"{value:.{places}f}".replace(".", ",")  # noqa: E731
    assert f" %{comma(report.recall * 100, 1)} " in lines[2]  # the sign before the number, as Turkish writes it
    assert lines[5].split()[-3:] == [comma(fitted.log_loss, 3), comma(fitted.rmse_bins, 3), comma(fitted.auc, 3)]
    assert lines[8].split()[-1] == "0,500"  # the baseline's AUC
    row = fitted.table[-1]
    assert f"  %{row.low * 100:.0f}–{row.high * 100:.0f} " in " ".join(lines)
    assert f" %{comma(row.predicted * 100, 1)} " in next(line for line in lines if line.endswith(f" {row.count:,}"
                                                                                                  .replace(",", ".")))
    assert comma(fitted.log_loss, 3) in lines[-1] and "." not in lines[-1].rstrip(".")


def test_json_has_the_same_figures(cli, year):
    report = expected_report(year)
    result = cli("stats", "--calibration", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert (data["reviews"], data["recalled"], data["enough"], data["best"]) == (
        report.reviews, report.recalled, True, "fsrs-fitted")
    for shown, score in zip(data["schedulers"], report.scores):
        assert shown["name"] == score.name
        assert shown["log_loss"] == round(score.log_loss, 4) and shown["rmse_bins"] == round(score.rmse_bins, 4)
        assert shown["auc"] == round(score.auc, 4)
        assert [(row["from"], row["reviews"]) for row in shown["table"]] == [(row.low, row.count) for row in score.table]
    assert data["baseline"]["log_loss"] == round(report.baseline.log_loss, 4)
    assert data["verdict"] == verdict(report)


def test_a_lesson_filter_scores_only_its_cards(cli, year):
    result = cli("stats", "--calibration", "--lesson", "bert-basics", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["reviews"] == 0


def test_calibration_writes_nothing(cli, year, isolated_home):
    path = isolated_home / "bertdrill.db"
    cli("stats", "--calibration")  # the first run may sync the shipped lesson
    before = path.read_bytes()
    assert cli("stats", "--calibration").exit_code == 0
    assert path.read_bytes() == before
