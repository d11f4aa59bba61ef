"""The class server in a real browser: Debian's Chromium, driven by Selenium through /usr/bin/chromedriver.

A learner logs in, reviews ten cards with the keyboard only (type, Enter, a grade key, ``u``), sees a wrong
number diagnosed and undoes it; the teacher logs in and reads the class's report. Screenshots at 390 px and
1280 px, light and dark, go to ``$BERTDRILL_SHOTS`` if set (else the test's temporary folder).

Nothing here may hang the suite: the server runs in a thread of this process and is told to exit, the
browser and its driver are quit (and killed by their process id if quitting fails), every wait has a
timeout, every database connection is closed, and a watchdog ends the whole run if the test outlives
:data:`DEADLINE` seconds.
"""

from __future__ import annotations

import faulthandler
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from serving import listening
from test_web import LESSON

from bertdrill.adapters.store import PostgresStore
from bertdrill.web.app import class_app
from bertdrill.web.classroom import ClassServer

selenium = pytest.importorskip("selenium", reason="selenium is in the test extra: pip install -e '.[test]'")
from selenium import webdriver  # noqa: E402
from selenium.common.exceptions import StaleElementReferenceException, WebDriverException  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.support import expected_conditions  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
requires_browser = pytest.mark.skipif(
    not (os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)) and not os.environ.get("CI"),
    reason="Chromium and chromedriver are not installed (apt-get install chromium chromium-driver; see .ci/run)")
DEADLINE = 300  # seconds for the whole test, browser start included
WAIT = 20  # seconds for any one page
FACTS = "".join(f"""
[[item]]
id = "fact-{n}"
kind = "fact"
question = {{ en = "Fact number {n}?", tr = "Bilgi {n}?" }}
answer = {{ en = "answer {n}", tr = "yanıt {n}" }}
""" for n in range(1, 9))


@pytest.fixture
def served(postgres, cli, tmp_path, monkeypatch):
    """A class of one learner (Ayşe) and a teacher (Tülin) on a server in this process; yields its address."""
    lesson = tmp_path / "web.toml"
    lesson.write_text(LESSON + FACTS, encoding="utf-8")
    monkeypatch.setenv("BERTDRILL_DB", postgres.url)
    assert cli("class", "init", "--file", str(lesson)).exit_code == 0
    assert cli("class", "add-learner", "Ayşe", "--password", "ayse-password").exit_code == 0
    assert cli("class", "add-teacher", "Tülin", "--password", "tulin-password").exit_code == 0
    store = PostgresStore.serving(postgres.url_as(f"{postgres.database}_server"))
    server = ClassServer(store, clock=__import__("datetime").datetime.now)
    try:
        with listening(class_app(server)) as url:
            yield url, postgres
    finally:
        store.close()  # every pooled connection of the server's store


@pytest.fixture
def browser(tmp_path):
    faulthandler.dump_traceback_later(DEADLINE, exit=True)  # a hung browser ends the run, never stalls it
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-extensions", "--hide-scrollbars", f"--user-data-dir={tmp_path / 'profile'}",
                 "--window-size=1280,900"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    service = Service(executable_path=CHROMEDRIVER, log_output=str(tmp_path / "chromedriver.log"))
    driver = webdriver.Chrome(options=options, service=service)
    driver.set_page_load_timeout(WAIT)
    driver.set_script_timeout(WAIT)
    try:
        yield driver
    finally:
        process = service.process
        try:
            driver.quit()
        finally:
            if process is not None and process.poll() is None:
                process.kill()  # the driver we started, by its own handle
                process.wait(timeout=10)
            faulthandler.cancel_dump_traceback_later()


def shots_folder(tmp_path: Path) -> Path:
    folder = Path(os.environ.get("BERTDRILL_SHOTS") or tmp_path / "shots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def wait_for(driver, css: str):
    return WebDriverWait(driver, WAIT).until(expected_conditions.presence_of_element_located((By.CSS_SELECTOR, css)))


def wait_for_all(driver, css: str):
    return WebDriverWait(driver, WAIT).until(expected_conditions.presence_of_all_elements_located((By.CSS_SELECTOR, css)))


# A page being redrawn under a wait: an element found on the old page is stale when read, or, in Chrome, "Node with
# given id does not belong to the document" (a plain WebDriverException). The wait reads again; a page that never
# shows what it waits for still ends in its timeout.
REDRAWN = (StaleElementReferenceException, WebDriverException)


def wait_for_text(driver, words: str, css: str = "main") -> None:
    """Wait until the page's ``css`` element shows ``words``, reading it again while the page is redrawn."""
    WebDriverWait(driver, WAIT, ignored_exceptions=REDRAWN).until(
        lambda found: words in found.find_element(By.CSS_SELECTOR, css).text)


def press(driver, keys: str) -> None:
    """Keys sent to the page (not to a field): the page's own shortcuts."""
    driver.find_element(By.TAG_NAME, "body").send_keys(keys)


def shoot(driver, folder: Path, name: str) -> list[Path]:
    """The page at a phone's width and a desktop's, light and dark (the theme cookie, as the page's form sets it)."""
    made = []
    for theme in ("light", "dark"):
        driver.add_cookie({"name": "bertdrill_theme", "value": theme, "path": "/"})
        for width in (390, 1280):
            driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
                "width": width, "height": 900, "deviceScaleFactor": 1, "mobile": width < 500})
            driver.refresh()
            wait_for(driver, "main")
            assert driver.execute_script("return document.documentElement.scrollWidth") <= width, (
                f"{name} scrolls sideways at {width} px")
            path = folder / f"{name}-{width}-{theme}.png"
            driver.get_screenshot_as_file(str(path))
            made.append(path)
    driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    driver.delete_cookie("bertdrill_theme")
    return made


def link(driver, text: str) -> str:
    """Where the page's link ``text`` goes (read again if the page was still being redrawn)."""
    address: str = WebDriverWait(driver, WAIT, ignored_exceptions=REDRAWN).until(
        lambda found: found.find_element(By.LINK_TEXT, text).get_attribute("href"))
    return address


def log_in(driver, address: str, name: str, password: str) -> None:
    driver.get(address + "/")
    wait_for(driver, "#name").send_keys(name)
    driver.find_element(By.ID, "password").send_keys(password + Keys.ENTER)


def answers_logged(postgres, count: int) -> Callable[[object], bool]:
    """A condition to wait for: the log holds ``count`` answers."""
    return lambda _driver: len(answered(postgres)) == count


def answered(postgres) -> list[tuple[str, int, str | None]]:
    with postgres.connect() as connection:  # closed on leaving the block: nothing left open after the test
        rows: list[tuple[str, int, str | None]] = connection.execute(
            "SELECT card_id, grade, typed FROM review ORDER BY id").fetchall()
        return rows


CUT_OPTIONS = """
const cut = [];
for (const select of document.querySelector(arguments[0]).querySelectorAll('select')) {
  const style = getComputedStyle(select);
  const room = select.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight) - 16;  // the arrow
  for (const option of select.options) {
    const text = document.createElement('span');
    text.style.cssText = 'position:absolute;white-space:nowrap;visibility:hidden';
    text.style.font = style.font;
    text.textContent = option.text;
    document.body.append(text);
    if (text.getBoundingClientRect().width > room) cut.push(option.text);
    text.remove();
  }
}
return cut;
"""
"""The options of a form's selects too wide to read whole in their closed select (the phone shows them cut)."""


@requires_browser
def test_a_learner_reviews_by_keyboard_and_the_teacher_reads_the_report(served, browser, tmp_path):
    address, postgres = served
    driver = browser
    folder = shots_folder(tmp_path)
    log_in(driver, address, "Ayşe", "ayse-password")
    field = wait_for(driver, "#answer")
    assert "How wide is Small?" in driver.find_element(By.ID, "question").text
    assert driver.switch_to.active_element == field  # the answer field has the focus: type at once
    field.send_keys("72" + Keys.ENTER)
    diagnosis = wait_for(driver, "#diagnosis").text
    assert diagnosis == "72 is attention of Small without the factor 4, not attention."
    shots = shoot(driver, folder, "diagnosis")
    press(driver, "1")  # grade 1: saved
    wait_for(driver, "#answer")
    assert answered(postgres) == [("web/width@small", 1, "72")]
    press(driver, "u")  # undo: the answer is gone and the card is back
    # The page before the undo has an answer field too: wait for the undo's own page, read again if redrawn.
    wait_for_text(driver, "Undone: web/width@small is back as it was.")
    wait_for(driver, "#answer")
    assert answered(postgres) == []
    for number in range(10):
        field = wait_for(driver, "#answer")
        field.send_keys(("72" if number == 0 else "2" if number == 1 else f"answer {number - 1}") + Keys.ENTER)
        wait_for(driver, "button[data-key='3']")
        press(driver, "1" if number == 0 else "4")
        WebDriverWait(driver, WAIT).until(answers_logged(postgres, number + 1))
    log = answered(postgres)
    assert len(log) == 10 and log[0] == ("web/width@small", 1, "72") and len({row[0] for row in log}) == 10
    driver.get(link(driver, "Progress"))  # her stats page: the charts drawn by the server
    wait_for(driver, "svg.chart")
    assert "10 answers in all" in driver.find_element(By.TAG_NAME, "main").text
    assert len(driver.find_elements(By.CSS_SELECTOR, "svg.chart")) >= 4  # heatmap, forecast, retention, workload
    shots += shoot(driver, folder, "stats")
    severe = [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]
    assert severe == []  # no script error, no CSP violation, no missing file
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {  # her scheduler, switched on a phone
        "width": 390, "height": 900, "deviceScaleFactor": 1, "mobile": True})
    driver.find_element(By.CSS_SELECTOR, "input[name='scheduler'][value='fsrs']").click()
    driver.find_element(By.CSS_SELECTOR, "form.scheduler-form button[type='submit']").click()
    wait_for_text(driver, "Switched to FSRS, desired retention 0.90")
    assert driver.execute_script("return document.documentElement.scrollWidth") <= 390
    # every control's words are whole on a phone: none is wider than the box that shows it (a select cut its option)
    assert [driver.execute_script(CUT_OPTIONS, form) for form in ("form[action='/stats/scheduler']",
                                                                  "form[action='/stats/exam']")] == [[], []]
    driver.execute_script("document.querySelector('form.scheduler-form').scrollIntoView()")
    driver.get_screenshot_as_file(str(folder / "stats-switched-390.png"))
    driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    driver.find_element(By.CSS_SELECTOR, "form[action='/logout'] button").click()
    log_in(driver, address, "Tülin", "tulin-password")
    wait_for(driver, "table.report")
    main = driver.find_element(By.TAG_NAME, "main").text
    assert "Ayşe" in main and "1 learner typed 72: 72 is attention of Small without the factor 4" in main
    shots += shoot(driver, folder, "teacher")
    driver.get(link(driver, "Ayşe"))  # her page: what she failed, and her charts
    assert "typed 72: 72 is attention of Small" in wait_for(driver, "main").text
    shots += shoot(driver, folder, "learner")
    driver.get(address + "/teacher")
    wait_for(driver, "form.sheet-form button[value='sheet']").click()  # the sheet of the hardest items, printed
    WebDriverWait(driver, WAIT, ignored_exceptions=REDRAWN).until(
        lambda found: "/teacher/sheet" in found.current_url
        and "How wide is Small?" in found.find_element(By.TAG_NAME, "body").text)
    font = driver.execute_script("return getComputedStyle(document.body).fontFamily")
    assert font.startswith('"DejaVu Sans"')  # the sheet's own inline style sheet applied: its own CSP lets it
    severe = [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]
    assert severe == []
    driver.get(address + "/teacher")
    driver.find_element(By.LINK_TEXT, "Members").click()
    assert [element.text for element in wait_for_all(driver, ".members .name")] == ["Ayşe", "Tülin"]
    shots += shoot(driver, folder, "members")
    assert all(path.stat().st_size > 5_000 for path in shots)


LONG_NAME = "Ж" * 60 + "W" * 40  # the longest name a member may have (100 characters), with no place to break


def scrolls_sideways(driver, width: int) -> bool:
    return bool(driver.execute_script("return document.documentElement.scrollWidth") > width)


@requires_browser
def test_no_page_is_wider_than_a_phone_whatever_a_members_name_holds(served, browser, cli, tmp_path):
    """A name with nowhere to break, in the header's logout button, made every page of its member wider than a phone
    (390 px): the question, the grades and the answer ran off the screen's edge. So did it on the teacher's pages
    that show it, and on the dashboard its column pushed the learners' figures out of view. Each page of both, at a
    phone's width."""
    address, _postgres = served
    assert cli("class", "add-learner", LONG_NAME, "--password", "long-password").exit_code == 0
    driver = browser
    folder = shots_folder(tmp_path)
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": 390, "height": 844, "deviceScaleFactor": 1, "mobile": True})
    log_in(driver, address, LONG_NAME, "long-password")
    wait_for(driver, "#answer").send_keys("72" + Keys.ENTER)  # a wrong number: the verdict, its diagnosis, the grades
    wait_for(driver, "button[data-key='3']")
    seen = {"verdict": scrolls_sideways(driver, 390)}
    # "✗ Incorrect" lines up with the question, as "✓ Correct" does (the dashboard's lists of wrong answers shared
    # the class name, and their indent)
    assert driver.execute_script("return document.querySelector('.verdict.wrong .mark').getBoundingClientRect().left - "
                                 "document.getElementById('question').getBoundingClientRect().left") == 0
    driver.get_screenshot_as_file(str(folder / "long-name-verdict-390.png"))
    for path in ("/review", "/stats", "/password"):
        driver.get(address + path)
        wait_for(driver, "main")
        seen[path] = scrolls_sideways(driver, 390)
    driver.find_element(By.CSS_SELECTOR, "form[action='/logout'] button").click()
    log_in(driver, address, "Tülin", "tulin-password")
    wait_for(driver, "table.report")
    # the learners' table scrolls in its box, but a long name wraps in its column: the name's column alone was the
    # width of five phones, with every figure beside it out of view
    widest = driver.execute_script("return Math.max(...Array.from(document.querySelectorAll('table.report td.name'), "
                                   "cell => cell.getBoundingClientRect().width))")
    assert widest <= 390 / 2
    learner = link(driver, LONG_NAME)
    for path in ("/teacher", learner, "/teacher/members"):
        driver.get(path if path.startswith("http") else address + path)
        wait_for(driver, "main")
        seen[path.rsplit("/", 2)[-2] if path.startswith("http") else path] = scrolls_sideways(driver, 390)
    driver.get_screenshot_as_file(str(folder / "long-name-members-390.png"))
    assert [page for page, wider in seen.items() if wider] == []
