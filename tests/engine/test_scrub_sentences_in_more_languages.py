"""A password given in a sentence of one of more languages loses its value and nothing else (OBS-57, OBS-58, OBS-59).

A Hermes user talks to the agent in their own language, and the agent writes its memory in it: ``Mật khẩu wifi là P``,
``Heslo k serveru je P``, ``A jelszó P``, ``Şifrem P``, ``كلمة المرور هي P``, ``הסיסמה שלי היא P``, ``รหัสผ่านคือ P``.
Before, only the label form (``Mật khẩu: P``) of these languages was read; the copula and the verbless forms left the
value whole. What such a sentence says about a password (``Heslo je špatné``, wrong) stays.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_pipeline.engine.scrub import find_spans, redaction_marker, scrub_text

from ._scrub_support import password

STATED = [
    # a copula, with what the password is for or whose it is
    "Mật khẩu là {p}", "Mật khẩu wifi mới là {p}", "mật khẩu của tôi là {p}", "Mat khau la {p}",
    "Heslo je {p}", "Heslo k WiFi je {p}", "Heslo do databáze je {p}", "Heslo pre server je {p}",
    "Parola este {p}", "Parola pentru router este {p}", "Lozinka je {p}", "Lozinka za Wi-Fi je {p}",
    "Лозинка је {p}", "Geslo je {p}", "Geslo za strežnik je {p}", "Паролата е {p}", "Пароль это {p}",
    "Ο κωδικός είναι {p}", "Ο κωδικός μου είναι {p}", "Ο κωδικός πρόσβασης είναι {p}",
    "Kata sandi adalah {p}", "Kata sandi wifi kantor adalah {p}", "Kata sandinya adalah {p}",
    "Kata laluan ialah {p}", "Slaptažodis yra {p}", "Parole ir {p}", "Parool on {p}", "Salasana on {p}",
    "La contrasenya és {p}", "Lykilorðið er {p}", "Nenosiri ni {p}", "كلمة المرور هي {p}", "وكلمة السر هي {p}",
    "הסיסמה היא {p}", "הסיסמה שלי היא {p}", "รหัสผ่านคือ {p}", "รหัสผ่าน คือ {p}", "รหัสผ่านของฉันคือ {p}",
    # the label form of the words newly known as names
    "Lozinka: {p}", "Slaptažodis: {p}", "geslo: {p}", "رمز عبور: {p}", "Lykilorð: {p}", "nenosiri: {p}",
    "Parool: {p}", "Salasõna: {p}",
]

UNSTATED = [
    # no verb: the language needs none or puts it last; the value must look generated
    "A jelszó {p}", "A jelszavam {p}", "Şifrem {p}", "Veritabanı şifresi {p}", "मेरा पासवर्ड {p} है",
    "Пароль від пошти {p}", "رمز عبور من {p} است", "Heslo k serveru {p}", "Moje heslo {p}",
]


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**32), form=st.sampled_from(STATED + UNSTATED), end=st.sampled_from(["", ".", "\n"]))
def test_property_a_generated_password_in_such_a_sentence_is_hidden_alone(seed: int, form: str, end: str) -> None:
    secret = password(random.Random(seed))
    text = form.format(p=secret) + end
    assert scrub_text(text) == text.replace(secret, redaction_marker(secret))


@pytest.mark.parametrize("value", ["Summer2024", "hunter2", "dragon77"])
@pytest.mark.parametrize("form", [f for f in STATED if ":" not in f and "=" not in f])
def test_a_word_and_a_number_stated_as_the_password_is_hidden(form: str, value: str) -> None:
    """OBS-58: a sentence that states the value (a copula) gives it as the English one does: a word and a number,
    as people make passwords, is the password."""
    text = form.format(p=value)
    assert scrub_text(text) == text.replace(value, redaction_marker(value))


@pytest.mark.parametrize("text", [
    "Mật khẩu là sai", "Heslo je špatné", "Heslo je příliš krátké", "Parola este greșită", "Lozinka je netočna",
    "Ο κωδικός είναι λάθος", "Kata sandi adalah rahasia", "A jelszó hibás", "Şifrem yanlış",
    "Slaptažodis yra per trumpas",
    "La contrasenya és incorrecta", "Nenosiri ni fupi mno", "كلمة المرور هي خاطئة", "הסיסמה היא שגויה",
    "รหัสผ่านไม่ถูกต้อง", "Parole ir pārāk īsa", "Parool on liiga lühike", "मेरा पासवर्ड गलत है",
    "Heslo je utf8mb4", "The parole board is meeting",
])
def test_what_such_a_sentence_says_about_a_password_stays(text: str) -> None:
    """OBS-55: a sentence that says something of the password, or holds no value that looks like one, is kept."""
    assert scrub_text(text) == text


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32), form=st.sampled_from(STATED + UNSTATED),
       case=st.sampled_from(["as is", "upper", "title"]), lead=st.sampled_from(["", "Note: ", "x = 1\n"]))
def test_property_the_readers_pre_checks_are_exact(seed: int, form: str, case: str, lead: str) -> None:
    """OBS-57: the readers look at a text only when it holds one of their words (a pre-check); in any case the spans
    are those of the readers run without it (``gated=False``)."""
    secret = password(random.Random(seed))
    words = {"as is": form, "upper": form.upper(), "title": form.title()}[case].replace("{P}", "{p}")
    text = lead + words.format(p=secret)
    assert find_spans(text) == find_spans(text, gated=False)


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32), service=st.sampled_from(["AWS", "wifi", "Gmail", "router", "NAS"]),
       form=st.sampled_from(["La password di {s} è {p}", "Minha senha {s} é {p}.", "Le mot de passe {s} est {p}.",
                             "a senha {s} é {p}", "Das Passwort {s} ist {p}", "la contraseña {s} es {p}",
                             "La password del {s} è {p}"]))
def test_property_obs58_a_qualifier_after_a_foreign_name_or_italian_di_before_the_copula(seed: int, service: str,
                                                                                          form: str) -> None:
    """OBS-58: where a language puts what the password is for after its name (``a senha AWS é P``, ``le mot de passe
    wifi est P``) or says it with ``di`` (``La password di wifi è P``), the copula still states the value."""
    value = password(random.Random(seed))
    text = form.format(s=service, p=value)
    assert scrub_text(text) == text.replace(value, redaction_marker(value))
