from bertdrill import __version__


def test_check_shipped_lessons(cli):
    result = cli("check")
    assert result.exit_code == 0, result.stderr
    assert "bert-basics" in result.stdout
    assert "22 items, 32 cards, 24 numbers verified" in result.stdout


def test_version(cli):
    result = cli("--version")
    assert result.stdout.strip() == f"bertdrill {__version__}"


def test_params_bert_base_prints_the_lesson_numbers(cli):
    result = cli("params", "bert-base")
    assert result.exit_code == 0
    for number in ("23,837,184", "7,087,872", "590,592", "109,482,240", "0.666"):
        assert number in result.stdout


def test_params_custom_set(cli):
    result = cli("params", "--set", "d=512", "--set", "f=2048", "--set", "n=8", "--lang", "tr")
    assert result.exit_code == 0
    assert "41.373.184" in result.stdout  # total for d=512, f=2048, n=8


def test_params_unknown_name_suggests(cli):
    result = cli("params", "--set", "dd=3")
    assert result.exit_code == 1
    assert result.stderr.strip() == "Error: --set: unknown name 'dd'; did you mean 'd'?"


def test_unknown_command_is_a_usage_error(cli):
    assert cli("nope").exit_code == 2


def test_check_warns_of_questions_that_give_each_other_away(cli):
    result = cli("check")
    assert result.exit_code == 0  # warnings, not errors
    warnings = result.stderr.splitlines()
    assert "decks/bert-basics.toml:245: warning: the question of bert-base-match shows “768”, the answer to " \
           "bert-base-settings; a sheet never puts the two on one version" in warnings
    assert any(line.startswith("decks/bert-basics.toml:154: warning: the question of embedding-params shows "
                               "“Word + position + segment”") for line in warnings)
    assert len(warnings) == 7 and all(": warning: " in line for line in warnings)
