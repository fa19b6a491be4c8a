"""Element identity in a real Chromium: recorded with each action on an element, and checked before a
replayed action acts, so that a changed page never gets the wrong element clicked.

The recorded page (fixtures/site/rematch/order.html) has Save and Cancel; its changed copies add a
Help link and a Delete button before Save, wrap it, rename its classes, rename it, or double it.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from support.helpers import SITE, action, ba, ok, ref_named, scenario, target

from xmltools.base.results import Failure, Identity, Observation, Point
from xmltools.base.serve import serve_directory
from xmltools.browser.session import BrowserSession
from xmltools.browser.settings import BrowserConfig
from xmltools.record.transcript import ReplaySettings, load_transcript
from xmltools.replaying.run import replay


def logged(obs: Observation) -> list[str]:
    return [e.text for e in obs.console]


async def record_save(
    b: BrowserSession, site: str, how: str, page: str = "order.html"
) -> tuple[Identity, object]:
    """Click Save on the recorded page while recording; its identity, and the target used."""
    ok(await b.launch(f"{site}/rematch/{page}"))
    if how == "ref":
        snap = ok(await b.act(action("snapshot"))).snapshot
        assert snap is not None
        tgt = target(ref=ref_named(snap, '- button "Save"'))
    elif how == "point":
        box = await b.on_page(lambda p: p.get_by_role("button", name="Save").bounding_box())
        tgt = target(at=Point(x=int(box["x"] + box["width"] / 2), y=int(box["y"] + box["height"] / 2)))
    else:
        tgt = target(selector="button >> nth=0", frame="#panel" if page.startswith("framed") else None)
    b.prepare(record_identity=True)
    obs = ok(await b.act(action("click", tgt)))
    assert logged(obs) == ["SAVE"], obs.console
    assert obs.identity is not None and obs.identity.described == 'button "Save"', obs.identity
    b.prepare(record_identity=False)
    return obs.identity, tgt


async def test_identity_is_recorded_with_unique_locators_in_playwrights_order(
    browser: BrowserSession, site: str
) -> None:
    identity, _ = await record_save(browser, site, "selector")
    assert identity.role == "button" and identity.name == "Save" and identity.tag == "button"
    assert identity.attributes["data-testid"] == "save"
    assert identity.text == "Save" and identity.box is not None and identity.box[2] > 0
    assert identity.locators[:3] == ('testid="save"', 'role=button[name="Save"s]', 'text="Save"'), identity
    assert identity.locators[-1].startswith("css=body > div > button:nth-of-type(1)")
    for locator in identity.locators:  # each finds exactly the recorded element
        obs = ok(await browser.act(action("click", target(selector=locator))))
        assert logged(obs) == ["SAVE"], (locator, obs.console)


async def test_identity_is_not_recorded_unless_asked(browser: BrowserSession, site: str) -> None:
    ok(await browser.launch(f"{site}/rematch/order.html"))
    obs = ok(await browser.act(action("click", target(selector="text=Save"))))
    assert obs.identity is None and obs.rematch is None


@pytest.mark.parametrize("how", ["ref", "point", "selector"])
async def test_a_target_that_now_reaches_another_element_is_found_again_every_time(
    browser: BrowserSession, site: str, how: str, repeat: int
) -> None:
    """On the changed page the recorded ref, point or selector reaches Delete (or Help): Save is
    found by its identity and clicked, and Delete never is."""
    identity, tgt = await record_save(browser, site, how)
    for i in range(repeat):
        ok(await browser.launch(f"{site}/__slow__/rematch/changed.html"))
        if how == "ref":
            snap = ok(await browser.act(action("snapshot"))).snapshot
            assert snap is not None and ref_named(snap, '- button "Save"') != tgt.ref  # type: ignore[attr-defined]
        browser.prepare(record_identity=False, expected=identity)
        obs = ok(await browser.act(action("click", tgt)))
        assert logged(obs) == ["SAVE"], (i, obs.console)
        assert obs.rematch is not None and obs.rematch.expected == 'button "Save"', obs.rematch
        assert obs.rematch.found_by == 'testid="save"' and obs.rematch.reached != 'button "Save"'
        assert obs.target == 'button "Save"'


async def test_the_same_element_is_acted_on_without_re_matching(browser: BrowserSession, site: str) -> None:
    identity, tgt = await record_save(browser, site, "point")
    ok(await browser.launch(f"{site}/rematch/order.html"))
    browser.prepare(record_identity=False, expected=identity)
    obs = ok(await browser.act(action("click", tgt)))
    assert logged(obs) == ["SAVE"] and obs.rematch is None


@pytest.mark.long
async def test_strict_fails_a_step_that_would_re_match_and_acts_on_nothing(site: str) -> None:
    async with BrowserSession(BrowserConfig(rematch="strict")) as b:
        res = await refused_on(b, site, "changed.html")
        assert 'button "Save"' in res.message and "strict" in res.message, res.message


async def refused_on(b: BrowserSession, site: str, page: str) -> Failure:
    """Save clicked by point on the recorded page, then the same click replayed on ``page``: the
    target failure, after which nothing was clicked."""
    identity, tgt = await record_save(b, site, "point")
    ok(await b.launch(f"{site}/rematch/{page}"))
    b.prepare(record_identity=False, expected=identity)
    res = await b.act(action("click", tgt))
    assert isinstance(res, Failure) and res.kind == "target", res
    assert res.observation is not None and logged(res.observation) == [], res.observation
    return res


@pytest.mark.long
async def test_a_renamed_element_is_not_taken_for_the_recorded_one(
    browser: BrowserSession, site: str
) -> None:
    res = await refused_on(browser, site, "renamed.html")
    assert 'the recorded element button "Save" was not found' in res.message, res.message
    assert 'button "Store"' in res.message  # what the locators found instead is listed


async def test_two_identical_elements_are_ambiguous_and_both_are_listed(
    browser: BrowserSession, site: str
) -> None:
    res = await refused_on(browser, site, "twice.html")
    assert "ambiguous" in res.message, res.message
    assert 'role=button[name="Save"s] finds 2: button "Save", button "Save"' in res.message, res.message


@pytest.mark.long
async def test_an_element_in_a_frame_is_found_again_in_that_frame(browser: BrowserSession, site: str) -> None:
    identity, tgt = await record_save(browser, site, "selector", page="framed.html")
    assert identity.frame == "#panel"
    ok(await browser.launch(f"{site}/rematch/framed-changed.html"))
    browser.prepare(record_identity=False, expected=identity)
    obs = ok(await browser.act(action("click", tgt)))
    assert obs.rematch is not None and obs.rematch.reached == 'button "Delete"', obs.rematch
    assert logged(obs) == ["SAVE"], obs.console


@pytest.mark.long
async def test_off_acts_as_written(site: str) -> None:
    async with BrowserSession(BrowserConfig(rematch="off")) as b:
        identity, tgt = await record_save(b, site, "point")
        ok(await b.launch(f"{site}/rematch/changed.html"))
        b.prepare(record_identity=False, expected=identity)
        obs = ok(await b.act(action("click", tgt)))
        assert obs.rematch is None and logged(obs) != ["SAVE"], obs.console


@pytest.mark.long
async def test_a_replay_of_a_changed_page_re_matches_and_says_so(tmp_path: Path) -> None:
    """Recorded on the order page, replayed where Help and Delete came before Save: the recorded
    point now reaches Help, Save is clicked all the same, and the summary names the step."""
    site = tmp_path / "site"
    shutil.copytree(SITE / "rematch", site)
    flow = scenario(
        tmp_path / "flow.jsonl",
        ba("launch", url="{base_url}/order.html"),
        ba("click", coordinate="100,100"),
        ba("close"),
    )
    recorded = tmp_path / "rec" / "flow.jsonl"
    with serve_directory(site) as base:
        first = await replay(flow, base_url=base, record=recorded)
    assert first.ok, first.summary()
    written = load_transcript(recorded)
    identities = [r.observation.identity for r in written.records if getattr(r, "observation", None)]
    assert [i.described if i else None for i in identities] == [None, 'button "Save"'], identities
    (site / "order.html").write_text((site / "changed.html").read_text())
    with serve_directory(site) as base:
        again = await replay(recorded, base_url=base)
    click = again.steps[1]
    assert [r.found_by for r in click.rematched] == ['testid="save"'], again.summary()
    assert not click.failures and not [d for d in click.drifts if d.field == "console"], again.summary()
    assert (
        'step 2: re-matched button "Save" with testid="save" (the step\'s target now reaches link "Help")'
        in (again.summary())
    )


@pytest.mark.long
async def test_recorded_snapshots_are_compared_refs_aside(tmp_path: Path) -> None:
    site = tmp_path / "site"
    shutil.copytree(SITE / "rematch", site)
    flow = scenario(
        tmp_path / "flow.jsonl",
        ba("launch", url="{base_url}/order.html"),
        ba("close"),
        header={"config": {"observe": "snapshot"}},
    )
    recorded = tmp_path / "rec" / "flow.jsonl"
    with serve_directory(site) as base:
        assert (await replay(flow, base_url=base, record=recorded)).ok
        same = await replay(recorded, base_url=base)
    assert same.ok, same.summary()
    (site / "order.html").write_text((site / "changed.html").read_text())
    with serve_directory(site) as base:
        changed = await replay(recorded, base_url=base)
        ignored = await replay(
            recorded, base_url=base, settings=ReplaySettings(ignore_snapshot=["(?i)help|delete"])
        )
    drift = [d for d in changed.drifts if d.field == "snapshot"]
    assert len(drift) == 1 and drift[0].detail is not None, changed.summary()
    assert (
        '(3 lines added, 0 gone): + - link "Help" [cursor=pointer]:; + - /url: "#help"; + - button "Delete"'
        in (drift[0].detail)
    )
    assert "ref=" not in drift[0].detail
    assert not [d for d in ignored.drifts if d.field == "snapshot"], ignored.summary()


async def test_a_name_shared_elsewhere_is_told_apart_by_its_section_and_landmark(
    browser: BrowserSession, site: str, repeat: int
) -> None:
    """Two buttons are named Save (the order's and the settings'): the recorded locators scope the name
    by the nearest section with an id and by the landmark; on a page where the settings moved above
    the order and the button got wrapped, the point reaches the other Save, and the order's is found."""
    ok(await browser.launch(f"{site}/rematch/scoped.html"))
    box = await browser.on_page(lambda p: p.locator("#order button").bounding_box())
    tgt = target(at=Point(x=int(box["x"] + 20), y=int(box["y"] + 20)))
    browser.prepare(record_identity=True)
    obs = ok(await browser.act(action("click", tgt)))
    browser.prepare(record_identity=False)
    assert logged(obs) == ["SAVE ORDER"] and obs.identity is not None
    assert obs.identity.locators[:2] == (
        '#order >> role=button[name="Save"s]',
        'role=main >> role=button[name="Save"s]',
    ), obs.identity.locators
    for _ in range(repeat):
        ok(await browser.launch(f"{site}/__slow__/rematch/scoped-changed.html"))
        browser.prepare(record_identity=False, expected=obs.identity)
        again = ok(await browser.act(action("click", tgt)))
        assert logged(again) == ["SAVE ORDER"], again.console
        assert again.rematch is not None and again.rematch.found_by.startswith("#order >> ")


@pytest.mark.long
async def test_a_named_session_s_element_is_checked_too(tmp_path: Path) -> None:
    site = tmp_path / "site"
    shutil.copytree(SITE / "rematch", site)
    flow = scenario(
        tmp_path / "flow.jsonl",
        ba("launch", session="shop", url="{base_url}/order.html"),
        ba("click", session="shop", coordinate="100,110"),
        ba("close", session="shop"),
        header={"config": {"profile": "full"}},
    )
    recorded = tmp_path / "rec" / "flow.jsonl"
    with serve_directory(site) as base:
        assert (await replay(flow, base_url=base, record=recorded)).ok
    (site / "order.html").write_text((site / "changed.html").read_text())
    with serve_directory(site) as base:
        again = await replay(recorded, base_url=base)
    assert [len(s.rematched) for s in again.steps] == [0, 1, 0], again.summary()
    click = again.steps[1].turn.outcomes[0].observation
    assert click is not None and logged(click) == ["SAVE"], click.console
