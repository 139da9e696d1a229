"""The judging loop in a real headless Chromium (selenium + Debian's chromium-driver):
pool -> judge in the browser, blind (no config, arm or rank on the page; two judges, a
skip, a note, a restart) -> merge -> rerun; the unblinded view shows the finders.

Skips, saying why, where Chromium, chromedriver or selenium is missing
(``scripts/test`` apt-installs ``chromium`` and ``chromium-driver``; selenium is in the
dev extra).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from rulegauge.cli import app
from rulegauge.goldset.judgments import read_judgments
from rulegauge.goldset.parse import load_goldset
from rulegauge.judging.blind import UNBLINDED, View
from rulegauge.judging.highlight import highlight, question_terms
from rulegauge.judging.poolfile import Pool, read_pool
from rulegauge.judging.server import serve_in_thread
from rulegauge.judging.session import Session
from rulegauge.pipeline.options import RunOptions
from rulegauge.pipeline.retrieval import run
from rulegauge.store.rundir import Run
from tests.helpers.browser import driven_chromium, webdriver_skip_reason
from tests.helpers.common import LEXICAL
from tests.helpers.judging import LEXICAL_CONFIG, sample_copy

pytestmark = pytest.mark.slow
ANN = ("0", "1", "s", "2", "0", "0", "1", "3", "0", "2", "1")  # keys ann presses after a click
BOB = ("3", "0", "2", "2", "0", "1")  # bob's grades of the first six pages


def scored_run(goldset: Path, runs: Path, run_id: str) -> Run:
    return Run(run(RunOptions(goldset=goldset, config=LEXICAL, runs_dir=runs, run_id=run_id,
                              metrics=("Judged@10", "nDCG@10"))).path)


def judged_at_10(r: Run) -> float:
    m = r.table("metrics")
    m = m[(m["metric"] == "Judged@10") & (m["config_id"] == LEXICAL_CONFIG)]
    assert len(m) == 57  # every question has its row
    return float(m["value"].mean())


def press(driver, keys: str, done_after: int) -> None:  # type: ignore[no-untyped-def]
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    before = driver.find_element(By.ID, "item-id").text
    ActionChains(driver).send_keys(keys).perform()
    WebDriverWait(driver, 20).until(
        lambda d: d.find_element(By.ID, "item-id").text != before
        and d.find_element(By.ID, "progress").text.startswith(f"{done_after} of "))


def systems_named(pool: Pool) -> set[str]:
    """Every config and arm that found a pooled page and every rank the finders carry
    ('arm #2')."""
    return ({f.source for p in pool.pages for f in p.found_by} | set(pool.configs)
            | {f"{f.kind} #{f.rank}" for p in pool.pages for f in p.found_by})


def page_words(driver) -> str:  # type: ignore[no-untyped-def]
    """Everything the page holds: its rendered text and its markup (hidden parts too)."""
    from selenium.webdriver.common.by import By

    text = driver.find_element(By.TAG_NAME, "body").text
    assert "found by" not in text and not driver.find_element(By.ID, "found-by").text
    return text + "\n" + driver.page_source


def test_pool_judge_in_the_browser_merge_and_rerun(tmp_path: Path) -> None:
    reason = webdriver_skip_reason()
    if reason:
        pytest.skip(reason)
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    gold = sample_copy(tmp_path)
    before = scored_run(gold, tmp_path / "runs", "v1")
    cli = CliRunner()
    pool_file = tmp_path / "pool.jsonl"
    out = cli.invoke(app, ["pool", str(before.path), "--depth", "3", "-c", LEXICAL_CONFIG,
                           "-o", str(pool_file)])
    assert out.exit_code == 0, out.output
    pool = read_pool(pool_file)
    judgments = tmp_path / "pool.judgments.jsonl"
    session = Session(pool, judgments)  # the default view: blind, seed 0
    order = session.items
    assert session.view == View(seed=0) and order != list(pool.pages)
    server, _ = serve_in_thread(session)
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    driver = driven_chromium(tmp_path / "profile")
    hidden = systems_named(pool)
    assert LEXICAL_CONFIG in hidden and {"bm25", "boost", "arm #1", "config #1"} <= hidden
    try:
        driver.get(base)  # no judge in the URL: the page asks for a name
        driver.find_element(By.ID, "judge-name").send_keys("ann")
        driver.find_element(By.ID, "start").click()
        wait = WebDriverWait(driver, 20)
        wait.until(lambda d: d.find_element(By.ID, "question").text)
        first = order[0]
        assert driver.find_element(By.ID, "item-id").text.startswith(
            f"{first.question_id} · {first.page}")
        shown = page_words(driver)  # blind: no config, arm or rank anywhere on the page
        assert [w for w in sorted(hidden) if w in shown] == []
        assert "blind" in driver.find_element(By.ID, "view").text
        q = next(q for q in pool.questions if q.question_id == first.question_id)
        marked = highlight(first.text, question_terms(q.question, q.language), q.language)
        assert len(driver.find_elements(By.CSS_SELECTOR, "#text mark")) == marked.count("<mark>")
        assert driver.find_element(By.ID, "gold-count").text == str(
            len([g for g in q.gold if g[0] != first.page]))
        driver.find_element(By.ID, "note").send_keys("setup page, not the answer")
        driver.find_element(By.ID, "grade-3").click()  # typing in the note: keys are text there
        wait.until(lambda d: d.find_element(By.ID, "progress").text.startswith("1 of "))
        done = 1
        for key in ANN:
            done += key != "s"
            press(driver, key, done)
            shown = page_words(driver)
            assert [w for w in sorted(hidden) if w in shown] == [], key
        assert "mean" in driver.find_element(By.ID, "timing").text
        # a second judge on the same pool, in the same session
        driver.get(base + "?judge=bob")
        wait.until(lambda d: d.find_element(By.ID, "progress").text.startswith("0 of "))
        for n, key in enumerate(BOB, start=1):
            press(driver, key, n)
        wait.until(lambda d: d.find_elements(By.ID, "kappa"))
        # shared pages 1, 2, 3, 5, 6 (ann skipped the 4th): ann 3 0 1 2 0, bob 3 0 2 0 1
        assert int(driver.find_element(By.ID, "n-disagreements").text) == 3
        assert len(driver.find_elements(By.CSS_SELECTOR, "li.disagreement")) == 3
        assert driver.find_element(By.CSS_SELECTOR, "#kappa td.kappa").text != "undefined"
        server.shutdown()
        server.server_close()
        # restart: judging resumes from the judgments file
        server, _ = serve_in_thread(Session(read_pool(pool_file), judgments))
        driver.get(f"http://127.0.0.1:{server.server_address[1]}/?judge=ann")
        wait.until(lambda d: d.find_element(By.ID, "progress").text.startswith(
            f"{done} of {len(pool.pages)} judged"))
        server.shutdown()
        server.server_close()
        # the unblinded view, asked for explicitly, names the finders (pool order)
        server, _ = serve_in_thread(Session(read_pool(pool_file), tmp_path / "open.jsonl",
                                            view=UNBLINDED))
        driver.get(f"http://127.0.0.1:{server.server_address[1]}/?judge=cy")
        wait.until(lambda d: d.find_element(By.ID, "found-by").text)
        assert driver.find_element(By.ID, "found-by").text == "found by " + ", ".join(
            f"{f.source} ({f.kind} #{f.rank})" for f in pool.pages[0].found_by)
        assert "unblinded" in driver.find_element(By.ID, "view").text
    finally:
        driver.quit()
        server.shutdown()
        server.server_close()
    rows = read_judgments(judgments)
    assert len(rows) == done + len(BOB)
    ann = [j for j in rows if j.judgment.judge_id == "ann"]
    assert ann[0].judgment.note == "setup page, not the answer" and ann[0].judgment.grade == 3
    assert (ann[0].question_id, ann[0].page) == (first.question_id, first.page)
    assert all(j.seconds is not None and j.seconds >= 0 for j in rows)
    assert {(j.view, j.order_seed) for j in rows} == {("blind", 0)}  # the view is recorded
    assert [j.pair for j in ann[:3]] == [(p.question_id, p.page) for p in order[:3]]
    skipped = order[3]  # ann's fourth judgment was a skip: that page waits for the end
    assert (skipped.question_id, skipped.page) not in {j.pair for j in ann}
    # merge the session into a new gold-set version, and rerun it
    v2 = gold.with_name("sample-v2.yaml")
    out = cli.invoke(app, ["goldset", "merge", str(gold), str(judgments), "-o", str(v2)])
    assert out.exit_code == 0, out.output
    assert f"{len(rows)} judgments added" in out.output
    merged = load_goldset(v2)
    zero = {j.pair for j in rows if j.judgment.grade == 0}
    assert zero and all(p in merged.question_by_id[q].judged_pages() for q, p in zero)
    after = scored_run(v2, tmp_path / "runs", "v2")
    assert judged_at_10(after) > judged_at_10(before)


def test_review_generated_questions_in_the_browser_and_run_the_gold_set(tmp_path: Path) -> None:
    """generate -> review in the browser (accept one, edit one, reject one, a restart)
    -> accept -> the gold set validates and runs."""
    reason = webdriver_skip_reason()
    if reason:
        pytest.skip(reason)
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import WebDriverWait

    from rulegauge.judging.proposals import read_proposals
    from rulegauge.judging.review import ReviewSession, read_decisions

    gold = sample_copy(tmp_path)
    cli = CliRunner()
    proposals = tmp_path / "proposals.jsonl"
    out = cli.invoke(app, ["goldset", "generate", str(gold), "-a", "extractive", "--page",
                           "bw-rules#3", "--page", "bw-rules#6", "-o", str(proposals)])
    assert out.exit_code == 0, out.output
    found = read_proposals(proposals)
    first, second, third = found.proposals[:3]
    decisions = tmp_path / "proposals.decisions.jsonl"
    server, _ = serve_in_thread(ReviewSession(found, decisions))
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    driver = driven_chromium(tmp_path / "profile")

    def progress(text: str) -> None:
        WebDriverWait(driver, 20).until(
            lambda d: d.find_element(By.ID, "progress").text.startswith(text))

    try:
        driver.get(base)
        driver.find_element(By.ID, "judge-name").send_keys("ann")
        driver.find_element(By.ID, "start").click()
        progress("0 of ")
        assert driver.find_element(By.ID, "item-id").text.startswith(first.proposal_id)
        assert driver.find_element(By.CSS_SELECTOR, "#text mark").text.split() == \
            first.answer.split()  # the answer sentence is marked in the page
        ActionChains(driver).send_keys("a").perform()  # accept
        progress("1 of ")
        assert driver.find_element(By.ID, "item-id").text.startswith(second.proposal_id)
        ActionChains(driver).send_keys("e").perform()  # edit: the cursor goes to the question
        field = driver.find_element(By.ID, "question")
        field.clear()
        field.send_keys("Who takes the first turn?", Keys.ENTER)
        progress("2 of ")
        server.shutdown()
        server.server_close()
        # restart: the review resumes from the decisions file
        server, _ = serve_in_thread(ReviewSession(read_proposals(proposals), decisions))
        driver.get(f"http://127.0.0.1:{server.server_address[1]}/?judge=ann")
        progress("2 of ")
        assert driver.find_element(By.ID, "item-id").text.startswith(third.proposal_id)
        ActionChains(driver).send_keys("r").perform()  # reject
        progress("3 of ")
        assert "1 accepted, 1 edited, 1 rejected" in driver.find_element(By.ID, "progress").text
    finally:
        driver.quit()
        server.shutdown()
        server.server_close()
    rows = read_decisions(decisions)
    assert [(d.proposal_id, d.decision) for d in rows] == [
        (first.proposal_id, "accept"), (second.proposal_id, "edit"), (third.proposal_id, "reject")]
    assert rows[1].question == "Who takes the first turn?" and rows[1].answer == second.answer
    generated = gold.with_name("generated.yaml")
    out = cli.invoke(app, ["goldset", "accept", str(proposals), str(decisions), "-o",
                           str(generated)])
    assert out.exit_code == 0, out.output
    out = cli.invoke(app, ["validate", str(generated)])
    assert out.exit_code == 0 and "2 questions" in out.output, out.output
    r = scored_run(generated, tmp_path / "runs", "generated")
    m = r.table("metrics")
    assert set(m["question_id"]) == {first.proposal_id, second.proposal_id}
