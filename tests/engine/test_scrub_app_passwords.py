"""An app password as the accounts that generate one show it (OBS-55, OBS-58, OBS-59): four groups of four
lower-case letters drawn at random, apart by a dash or a space (``ofsn-jxeg-ihtt-qwza``, ``ofsn jxeg ihtt qwza``).

Under a password's name the groups are one value, whatever their letters read as: a group holding ``xxx``
(``ofsn-jxeg-ihtt-xxxa``) is no mask, a space between groups does not end the value. The placeholder the accounts'
help shows (``xxxx xxxx xxxx xxxx``, ``abcd efgh ijkl mnop``) and four words of a sentence stay."""

from __future__ import annotations

import json
import random
import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_pipeline.engine.scrub import scrub_text

from ._scrub_support import assert_only_secret_hidden


def _groups(seed: int, sep: str, masked: bool) -> str:
    """Four random groups of four letters; ``masked``: one group holds ``xxx`` (as one draw in ~10,000 does)."""
    r = random.Random(seed)
    groups = ["".join(r.choice(string.ascii_lowercase) for _ in range(4)) for _ in range(4)]
    if masked:
        k = r.randrange(4)
        at = r.randrange(2)
        groups[k] = groups[k][:at] + "xxx" + groups[k][at + 3:]
    return sep.join(groups)


_FORMS = ("app_password: {P}", "GMAIL_APP_PASSWORD={P}", "SMTP_PASS={P}", "Gmail app password: {P}",
          "- **App password**: {P}", "app password for smtp: {P}", "password (gmail) = {P}", "pw: **{P}**",
          "my gmail app password is {P}", "The app password is {P}.", "app password {P}",
          "the password for gmail is {P}",
          "密码：{P}", "应用专用密码是{P}", "パスワードは{P}", "smtp:\n  password: {P}\n  port: 587",
          "Remember the mail app password: {P} (set up on Monday)", "`SMTP_PASSWORD`: {P}")


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**32), sep=st.sampled_from(" -"), masked=st.booleans(), form=st.sampled_from(_FORMS))
def test_property_obs58_59_an_app_password_loses_its_four_groups_whatever_they_read_as(
        seed: int, sep: str, masked: bool, form: str) -> None:
    """OBS-58/59: the four groups are one value under a password's name, a group holding ``xxx`` too."""
    secret = _groups(seed, sep, masked)
    assert_only_secret_hidden(form.format(P=secret), secret)


@pytest.mark.parametrize("secret", ["ofsn-jxeg-ihtt-xxxa", "eyrg-ikiv-wybk-xxxv", "cwgs-kksc-ggar-jxxx",
                                    "xxxq-jxeg-ihtt-qwza", "ofsn jxeg ihtt xxxa", "kxvw kxvw pzrw tpck"])
def test_obs58_the_draws_whose_group_read_as_a_mask_lose_their_value(secret: str) -> None:
    """OBS-58: the draws of ``test_scrub_shapes_forms`` that leaked (``app_password: ofsn-jxeg-ihtt-xxxa``): a group
    holding ``xxx`` is no mask of a key's tail; two groups drawn alike (``kxvw kxvw pzrw tpck``, one draw in 75,000)
    are still one app password."""
    assert_only_secret_hidden(f"app_password: {secret}", secret)


@settings(max_examples=100, deadline=None)
@given(seed=st.integers(0, 2**32), sep=st.sampled_from(" -"), masked=st.booleans())
def test_property_obs59_an_app_password_in_a_tool_results_json_loses_the_same_value(
        seed: int, sep: str, masked: bool) -> None:
    """OBS-59: a note written to a JSON string loses the value with the marker it has unwrapped."""
    secret = _groups(seed, sep, masked)
    text = json.dumps({"output": f"Saved to memory: Gmail app password: {secret}\nDone."})
    assert_only_secret_hidden(text, secret)


@pytest.mark.parametrize("text", [
    "GMAIL_APP_PASSWORD=xxxx-xxxx-xxxx-xxxx",
    'SMTP_PASSWORD="xxxx xxxx xxxx xxxx"',
    "app password: abcd efgh ijkl mnop",
    "app_password: abcd-efgh-ijkl-mnop",
    "password: this will work fine",
    "passwords for the team: have been sent over mail",
    "the password is what they said last time",
    "bypass ofsn jxeg ihtt qwza",
    "compass: ofsn jxeg ihtt qwza",
    "app password: pass pass pass pass",
    "the password: test test demo demo",
])
def test_obs55_the_shown_placeholder_and_a_sentence_of_words_stay(text: str) -> None:
    """OBS-55: the placeholder an account's help shows, a sentence of four-letter words after a password's name and
    a word ending as such a name does (``bypass``) are no credentials."""
    assert scrub_text(text) == text
