"""A credential given in a sentence of a language written without blanks (Chinese, Japanese, Korean) loses exactly
its value (OBS-55, OBS-58, OBS-59): the word for the credential (``密码``, ``パスワード``, ``비밀번호``), the word for
*key* after its qualifier (``APIキー``, ``アクセスキー``, ``API 키``), an English name or a setting's name in the
sentence (``API Key是P``, ``OPENAI_API_KEY に P を設定``); then ``is``, ``changed to``, a particle, a colon, a dash,
an arrow or ``【…】``, a note in parentheses before it (``APIキー（本番）は``); the value quoted in ``「」`` or not,
the sentence going on after it. Under a name of a user and a password (``用户名/密码``, ``账号密码``, ``ログイン``)
the user stays."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_pipeline.engine.scrub import redaction_marker, scrub_text

from ._scrub_support import password

NAMES = ("密码", "密碼", "口令", "パスワード", "비밀번호", "패스워드", "令牌", "密钥", "トークン", "APIキー", "API キー",
         "アクセスキー", "シークレットキー", "秘密キー", "API 키", "액세스 키", "API Key", "api key", "token", "Token",
         "access_token", "OPENAI_API_KEY", "DB_PASSWORD", "金鑰", "權杖", "パスフレーズ")
GLUES = ("是", "为", "為", "是 ", " 是 ", "は", "は、", " は ", "が", "を", "는 ", "은 ", "를 ", "을 ", "改成", "改为",
         "改成了", "设置为", "变更为", "：", ": ", "=", "——", "→", " -> ", "（本番）は", "（生产环境）：", "(prod): ")
BEFORE = ("", "数据库的", "本番の", "请注意，", "OpenAIの", "新的", "用户的 ", "我把", "- ", "> ", "* ")
AFTER = ("", "。", "，请妥善保管。", "です。", " です", " 입니다", "에서 확인", "に変更しました。", " 了", "，然后重启服务",
         "（有効期限 2027）", " ✅")
QUOTES = (("", ""), ("「", "」"), ("『", "』"), ("“", "”"), ("`", "`"))


def _check(text: str, secret: str) -> None:
    out = scrub_text(text)
    assert text.count(secret) == 1
    assert out == text.replace(secret, redaction_marker(secret)), (text, out)
    assert scrub_text(out) == out


def _glue_fits(name: str, glue: str) -> bool:
    """An English name or a setting's name gives its value with the sentence's own word (``是``, ``は``, ``改成``),
    not with a colon, a dash or an arrow (that is a label's, read on its own)."""
    if not name.isascii():
        return True
    return any(not c.isascii() for c in glue.strip()) and not glue.strip().startswith(("：", "（", "——", "→"))


@settings(max_examples=500, deadline=None)
@given(seed=st.integers(0, 2**32), name=st.sampled_from(NAMES), glue=st.sampled_from(GLUES),
       before=st.sampled_from(BEFORE), after=st.sampled_from(AFTER), quote=st.sampled_from(QUOTES))
def test_property_obs58_a_credential_in_a_sentence_without_blanks(seed: int, name: str, glue: str, before: str,
                                                                  after: str, quote: tuple[str, str]) -> None:
    """OBS-58, OBS-59: every name, connector, enclosure and continuation above: the value only is hidden."""
    if not _glue_fits(name, glue):
        glue = "是"
    secret = password(random.Random(seed))
    _check(f"{before}{name}{glue}{quote[0]}{secret}{quote[1]}{after}", secret)


@pytest.mark.parametrize("text", [
    "APIキーは{p} です", "APIキーは「{p}」です。", "アクセスキーは{p}", "シークレットキーは {p} です", "OpenAIのAPIキーは{p}です。",
    "OpenAI の API キーは {p} です。", "APIキーを「{p}」に変更しました。", "API 키는 {p} 입니다", "패스워드는 {p} 입니다",
    "비밀번호를 {p}(으)로 변경했습니다", "API Key是{p}", "API key 是 {p}", "把密码改成{p}", "密码改为 {p} 了", "密码改成了{p}",
    "账号admin，密码{p}", "token是{p}", "API 金鑰：{p}", "存取權杖為 {p}", "【密码】{p}", "【APIキー】{p}", "密码——{p}",
    "ユーザーのAPIキー（本番）は{p}です。", "APIキー（本番）：{p}", "環境変数 OPENAI_API_KEY に {p} を設定", "PIN码是{p}",
    "邮箱授权码：{p}", "QQ邮箱的授权码是{p}", "用 {p} 作为密码", "请用{p}作为API密钥", "用 {p} 作为 GitHub 令牌",
    "{p} をパスワードとして使う", "{p}を新しいパスワードに設定", "你的新密码是：\n{p}", "密码如下：\n```\n{p}\n```",
    "APIキーは次の通りです：\n{p}", "密码\u3000{p}", "パスワード\u3000{p}", "パスワード：\u3000{p}", "APIキー\u3000：\u3000{p}",
    "・APIキー…{p}", "パスワード……{p}", '"password"："{p}"', "'パスワード'：'{p}'", '{{"密码"："{p}"}}',
    "・**トークン**：{p}", "**トークン**は {p} です", "※ パスワード - {p}", "● 密码 - {p}", "OpenAI的key是{p}",
    "비번: {p}", "비번은 {p}"])
def test_obs58_sentences_found_leaking(text: str) -> None:
    """OBS-58: each of these gave its value whole before (the names, particles, verbs and brackets were unknown, an
    ideographic space was no blank, a full-width colon joined no quoted key to its value)."""
    secret = password(random.Random(text))
    _check(text.format(p=secret), secret)


@pytest.mark.parametrize("text, user", [
    ("用户名/密码：admin/{p}", "admin"), ("ユーザー名/パスワード：deploy/{p}", "deploy"), ("账号密码：admin/{p}", "admin"),
    ("用户名和密码是admin/{p}", "admin"), ("ID/PW: ops/{p}", "ops"), ("账号/密码: admin / {p}", "admin"),
    ("ログイン：admin / {p}", "admin"), ("登录信息：root / {p}", "root"), ("Grafana 登录：admin / {p}", "admin"),
    ("user/password: admin/{p}", "admin"), ("凭据：admin / {p}", "admin"), ("凭据：admin/{p}", "admin"),
    ("認証情報: deploy / {p}", "deploy"), ("Grafana 的凭据是 admin/{p}", "admin")])
def test_obs59_a_user_and_a_password_named_together_keep_the_user(text: str, user: str) -> None:
    """OBS-59: under a name of a user and a password (``用户名/密码``, ``账号密码``, a login label) the user stays; only
    the password goes (``admin/`` was hidden with it)."""
    secret = password(random.Random(text))
    full = text.format(p=secret)
    _check(full, secret)
    assert user in scrub_text(full)


@pytest.mark.parametrize("text", [
    "APIキーは環境変数に設定してください", "密码是必填项", "token是JWT格式", "APIキーはOPENAI_API_KEYに保存",
    "令牌Bucket算法", "token数为4096", "パスワードはbcryptでハッシュ化", "APIキーをconfig.yamlに書く",
    "token是通过OAuth2获取的", "APIキーはsk-で始まる", "密码MD5值", "Token的过期时间", "秘密キーはid_rsaです",
    "API 키는 .env 파일에", "password是string类型", "access_token为None时", "APIキーはget_api_key()で取得",
    "トークンはBearerTokenとして渡す", "API Key是在Settings页面生成的", "密码长度8-64位", "APIキーをHERMES_API_KEYに入れる",
    "密钥是base64编码的", "密码是utf8mb4", "secret是k8s里的Secret对象", "passwordはrequiredです", "キーはuser_idです",
    "APIキーはv2から必須", "パスコードは4桁", "OPENAI_API_KEY に環境変数を設定", "token_count为1024", "max_tokens为4096",
    "api_key是必需参数，例如sk-xxx", "【注意】Xq7RkW2pLm9Tz", "密码——请联系管理员", "设置 DB_PASSWORD 为 ${DB_PASSWORD}",
    "API_KEY为your-api-key", "tokenは「Bearer」で始まる", "api_key → config.yaml", "路径：a / b", "用 admin 作为密码",
    "用 bcrypt 作为密码哈希", "使用 JWT 作为令牌格式", "config.yaml をパスワードとして", "密码如下：\n- 长度至少 8 位",
    "APIキーは次の通りです：\nOPENAI_API_KEY", "凭据存储在 Vault 中", "認証情報はVaultに保存", "凭据：见 1Password",
    "암호화 방식: AES-256-GCM", '{"암호화": "AES256"}', "비번 찾기", "key是必填的", "key为user_id", "primary key是id"])
def test_obs55_words_names_and_placeholders_stay(text: str) -> None:
    """OBS-55: a word, a setting's name, a file, a format, a placeholder after the same names stay."""
    assert scrub_text(text) == text


@pytest.mark.parametrize("text", [
    'DriverManager.getConnection(url, "sa", "{p}")', 'ds.getConnection("sa", "{p}")',
    'Connection c = DriverManager.getConnection("jdbc:mysql://db:3306/app", user, "{p}");',
    "The user's Jira API token (expires 2027) is {p}.", "The API token for Jira (prod) is {p}"])
def test_obs58_jdbc_logins_and_a_note_between_name_and_is(text: str) -> None:
    """OBS-58: JDBC's login by position, and an English sentence with a note in parentheses between the credential's
    name and ``is``: the value only."""
    secret = password(random.Random(text))
    _check(text.format(p=secret), secret)


@pytest.mark.parametrize("text", ['getConnection(url, "sa", "")', "getConnection(url, props)",
                                  "the password (see wiki) is incorrect", "The token (JWT) is signed"])
def test_obs55_calls_and_sentences_without_a_value_stay(text: str) -> None:
    assert scrub_text(text) == text


# ------------------------------------------------------------------------------------------------------------------
# The value first with the setting named after it, one-time codes, 암호 (OBS-55, OBS-58, OBS-59)
# ------------------------------------------------------------------------------------------------------------------

_INTO_LEADS = ("把", "将", "將", "请把", "先把", "记得将")
_INTO_VERBS = ("填到", "填入", "写到", "写入", "寫入", "放到", "放入", "设为", "設為", "粘贴到", "添加到", "保存到")
_INTO_TARGETS = ("config.yaml 的 api_key 字段", ".env 的 OPENAI_API_KEY", "settings.py 里的 DB_PASSWORD",
                 "secrets.toml 中的 token", "API 密钥", "环境变量 GITHUB_TOKEN 里", "config.json 的 client_secret 中",
                 ".env里的ANTHROPIC_API_KEY")


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**32), lead=st.sampled_from(_INTO_LEADS), verb=st.sampled_from(_INTO_VERBS),
       target=st.sampled_from(_INTO_TARGETS), blank=st.sampled_from((" ", "", "\u3000")),
       end=st.sampled_from(("", "。", "，然后重启服务。", "！")))
def test_property_obs58_the_value_first_the_setting_named_after_it(seed: int, lead: str, verb: str, target: str,
                                                                   blank: str, end: str) -> None:
    """OBS-58, OBS-59: ``把 P 填到 config.yaml 的 api_key 字段``, ``将 P 填入 .env 的 OPENAI_API_KEY``: the value, then
    where it goes, the credential's name after it: the value only."""
    secret = password(random.Random(seed))
    _check(f"{lead}{blank}{secret}{blank}{verb}{blank}{target}{end}", secret)


_CODE_NAMES = ("验证码", "驗證碼", "动态码", "認証コード", "確認コード", "인증 코드", "인증번호", "恢复码", "备用码")
_CODE_GLUES = ("是", "：", ": ", "为", "は", "는 ", "：　")


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**32), name=st.sampled_from(_CODE_NAMES), glue=st.sampled_from(_CODE_GLUES),
       digits=st.booleans(), before=st.sampled_from(("", "您的", "本次", "- ")),
       end=st.sampled_from(("", "。", "，5分钟内有效。", " です", " 입니다")))
def test_property_obs58_one_time_and_verification_codes(seed: int, name: str, glue: str, digits: bool, before: str,
                                                        end: str) -> None:
    """OBS-58, OBS-59: a one-time, verification or recovery code is a credential (``验证码是P``, ``認証コードはP``,
    ``인증 코드: P``), digits alone too: the code only."""
    r = random.Random(seed)
    secret = str(r.randint(100000, 99999999)) if digits else password(r)
    _check(f"{before}{name}{glue}{secret}{end}", secret)


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32), before=st.sampled_from(("", "DB ", "서버 ", "관리자 ", "- ", "새 ")),
       glue=st.sampled_from((": ", "：", "는 ", "은 ", " ", "를 ", "가 ")),
       end=st.sampled_from(("", " 입니다", "입니다.", " (변경 필요)")))
def test_property_obs58_amho_is_a_password(seed: int, before: str, glue: str, end: str) -> None:
    """OBS-58, OBS-59: Korean ``암호`` (password) names a password (``암호: P``, ``DB 암호는 P``); ``암호화``
    (encryption) does not (test_obs55_words_names_and_placeholders_stay, test_scrub_false_positives)."""
    secret = password(random.Random(seed))
    _check(f"{before}암호{glue}{secret}{end}", secret)


@pytest.mark.parametrize("template", ["密码：<{p}>", "密码是<{p}>", "パスワード：<{p}>", "비밀번호: <{p}>", "恢复码：{p} {q}",
                                      "恢复码：{p}、{q}", "備用碼: {p}, {q}", "リカバリーコード：{p} {q}"])
def test_obs59_angle_brackets_and_several_codes_after_one_name(template: str) -> None:
    """OBS-59: the angle brackets around a value stay (only the value inside goes); several codes after one name each
    lose their value, the separators stay."""
    r = random.Random(template)
    p, q = password(r), password(r)
    text = template.format(p=p, q=q)
    out = scrub_text(text)
    assert out == text.replace(p, redaction_marker(p)).replace(q, redaction_marker(q)), (text, out)
    assert scrub_text(out) == out


@pytest.mark.parametrize("template", [
    "{p} を .env の OPENAI_API_KEY に設定してください", "{p}を config.yaml の api_key に入れる", "{p} を環境変数 GITHUB_TOKEN に登録",
    "{p}를 .env의 OPENAI_API_KEY에 넣으세요", "{p}을 설정 파일의 api_key로 설정", "把{p}配置为GITHUB_TOKEN",
    "请将「{p}」粘贴到 settings.json 的 client_secret 字段。"])
def test_obs58_the_value_first_the_setting_named_after_it_in_japanese_and_korean(template: str) -> None:
    """OBS-58, OBS-59: the same order in Japanese and Korean (``P を .env の OPENAI_API_KEY に設定``, ``P를 .env의
    API_KEY에 넣으세요``): the value only (``README.md를 docs 폴더에 넣으세요`` stays: no credential is named)."""
    secret = password(random.Random(template))
    _check(template.format(p=secret), secret)


@pytest.mark.parametrize("template", ["OTP是{d}", "您的验证码是 {d}，5分钟内有效", "確認コードは{d}です", "인증 코드는 {d}입니다",
                                      "ワンタイムコードは{d}です", "TOTP是{d}"])
def test_obs58_a_one_time_code_of_digits(template: str) -> None:
    """OBS-58, OBS-59: a one-time code of digits alone after its name, the sentence going on after it: the code only
    (``验证码已发送`` stays: no value)."""
    digits = str(random.Random(template).randint(100000, 99999999))
    _check(template.format(d=digits), digits)


@pytest.mark.parametrize("value", ["hunter2", "sommer24", "ekuRLFAB0OclRywdzx", "HSBN3Igdgkefmeh"])
@pytest.mark.parametrize("sentence", ["密码是{p}", "密码 {p}，别告诉别人", "パスワードは{p}です", "ユーザー名 admin パスワード {p}",
                                      "비밀번호는 {p}", "API Key是{p}"])
def test_obs58_a_word_and_a_number_or_a_name_like_draw_in_a_cjk_sentence_is_hidden(sentence: str, value: str) -> None:
    """OBS-58: a sentence without spaces states its value as an English one does: a word and a number, and letters
    and digits whose pieces read as a CamelCase name's, are the password; the sentence's own script stays."""
    text = sentence.format(p=value)
    assert scrub_text(text) == text.replace(value, redaction_marker(value))


@pytest.mark.parametrize("text", ["パスワードはmd5でハッシュ", "密码用sha256加密", "パスワードはbase64で保存"])
def test_obs55_what_a_cjk_sentence_says_a_password_is_stays(text: str) -> None:
    assert scrub_text(text) == text
