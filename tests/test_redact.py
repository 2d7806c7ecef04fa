"""Behaviour of supermemory.redact: secrets out, everything else byte-identical.

Every credential below is fake: built at import time from a fixed
pseudo-random generator and split prefixes ("gh" + "p_"), so this file holds
no string that a secret scanner would take for a real key.
"""

from __future__ import annotations

import base64
import random
import time

import pytest

from supermemory.redact import PRIVATE_TYPE, REDACTION_TYPES, redact

UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
LOWER = "abcdefghijklmnopqrstuvwxyz"
DIGITS = "0123456789"
ALNUM = UPPER + LOWER + DIGITS
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
B64URL = ALNUM + "-_"

_rng = random.Random(20240601)


def fake(n: int, alphabet: str = ALNUM) -> str:
    """n random-looking characters with at least one digit (real keys have one)."""
    chars = [_rng.choice(alphabet) for _ in range(n)]
    if not any(c.isdigit() for c in chars) and any(c.isdigit() for c in alphabet):
        chars[n // 2] = "7"
    return "".join(chars)


def marker(kind: str) -> str:
    return "[REDACTED:" + kind + "]"


def pem(label: str, body_lines: int = 4) -> tuple[str, str]:
    """A PEM-looking block and one of its body lines."""
    lines = [fake(64, B64) for _ in range(body_lines)]
    block = "-----BEGIN " + label + "-----\n" + "\n".join(lines) + "\n-----END " + label + "-----"
    return block, lines[1]


# ---------------------------------------------------------------------------
# Fake credentials
# ---------------------------------------------------------------------------

AWS_ID = "AK" + "IA" + fake(16, UPPER + DIGITS)
AWS_TEMP_ID = "AS" + "IA" + fake(16, UPPER + DIGITS)
AWS_SECRET = fake(40, B64)
GH_CLASSIC = "gh" + "p_" + fake(36)
GH_OAUTH = "gh" + "o_" + fake(36)
GH_SERVER = "gh" + "s_" + fake(36)
GH_USER = "gh" + "u_" + fake(36)
GH_REFRESH = "gh" + "r_" + fake(40)
GH_FINE = "github" + "_pat_" + fake(22) + "_" + fake(59)
GITLAB = "gl" + "pat-" + fake(20, B64URL)
OPENAI_LEGACY = "sk" + "-" + fake(48)
OPENAI_PROJECT = "sk" + "-proj-" + fake(40, B64URL) + "T3Blbk" + fake(40, B64URL)
ANTHROPIC = "sk" + "-ant-api03-" + fake(93, B64URL) + "AA"
SLACK_BOT = "xo" + "xb-" + fake(12, DIGITS) + "-" + fake(13, DIGITS) + "-" + fake(24)
SLACK_USER = "xo" + "xp-" + fake(12, DIGITS) + "-" + fake(12, DIGITS) + "-" + fake(13, DIGITS) + "-" + fake(32, HEX)
SLACK_HOOK_PATH = "T" + fake(8, UPPER + DIGITS) + "/B" + fake(10, UPPER + DIGITS) + "/" + fake(24)
STRIPE_SECRET = "sk" + "_live_" + fake(24)
STRIPE_RESTRICTED = "rk" + "_live_" + fake(30)
STRIPE_PUBLISHABLE = "pk" + "_live_" + fake(40)
GOOGLE = "AI" + "za" + fake(35, B64URL)
NPM = "np" + "m_" + fake(36)
JWT = (
    "ey" + "J" + fake(30, B64URL)
    + "." + "ey" + "J" + fake(60, B64URL)
    + "." + fake(43, B64URL)
)
OPAQUE = fake(40, B64URL)
BASIC = base64.b64encode(b"deploy:" + fake(12).encode()).decode()
PASSWORD = "Tr0ub4dor" + "&3x!" + fake(4)
RSA_BLOCK, RSA_LINE = pem("RSA PRIVATE KEY")
OPENSSH_BLOCK, OPENSSH_LINE = pem("OPENSSH PRIVATE KEY")
EC_BLOCK, EC_LINE = pem("EC PRIVATE KEY", 2)
DSA_BLOCK, DSA_LINE = pem("DSA PRIVATE KEY")
PLAIN_BLOCK, PLAIN_LINE = pem("PRIVATE KEY")
ENCRYPTED_BLOCK, ENCRYPTED_LINE = pem("ENCRYPTED PRIVATE KEY")
PGP_BLOCK, PGP_LINE = pem("PGP PRIVATE KEY BLOCK", 6)
JSON_KEY_BODY = fake(64, B64)

# (test id, text, secret that must disappear, expected type, words that must survive)
POSITIVE = [
    # --- AWS ---------------------------------------------------------------
    ("aws access key in a credentials file", f"[default]\naws_access_key_id = {AWS_ID}\nregion = eu-west-1",
     AWS_ID, "aws_access_key", ["[default]", "aws_access_key_id = ", "region = eu-west-1"]),
    ("aws temporary key id in sts json", f'{{"AccessKeyId": "{AWS_TEMP_ID}", "Expiration": "2030"}}',
     AWS_TEMP_ID, "aws_access_key", ['"AccessKeyId": "', '"Expiration": "2030"']),
    ("aws access key exported in a shell", f"export AWS_ACCESS_KEY_ID={AWS_ID} && terraform plan",
     AWS_ID, "aws_access_key", ["export AWS_ACCESS_KEY_ID=", "&& terraform plan"]),
    ("aws secret key in a credentials file", f"[prod]\naws_secret_access_key = {AWS_SECRET}\noutput = json",
     AWS_SECRET, "aws_secret_key", ["[prod]", "aws_secret_access_key = ", "output = json"]),
    ("aws secret key as a quoted env var", f'AWS_SECRET_ACCESS_KEY="{AWS_SECRET}" aws s3 ls',
     AWS_SECRET, "aws_secret_key", ["AWS_SECRET_ACCESS_KEY=", "aws s3 ls"]),
    ("aws secret key in sts json", f'{{"SecretAccessKey": "{AWS_SECRET}", "SessionToken": null}}',
     AWS_SECRET, "aws_secret_key", ['"SecretAccessKey"', '"SessionToken": null']),
    # --- GitHub / GitLab ---------------------------------------------------
    ("github classic token in a remote url", f"git remote set-url origin https://{GH_CLASSIC}@github.com/acme/app.git",
     GH_CLASSIC, "github_token", ["git remote set-url origin https://", "@github.com/acme/app.git"]),
    ("github oauth token in json", f'{{"access_token": "{GH_OAUTH}", "scope": "repo"}}',
     GH_OAUTH, "github_token", ['"access_token"', '"scope": "repo"']),
    ("github server token in an actions log", f"Using installation token {GH_SERVER} for checkout",
     GH_SERVER, "github_token", ["Using installation token", "for checkout"]),
    ("github user to server token", f"GH_TOKEN={GH_USER} gh pr list",
     GH_USER, "github_token", ["GH_TOKEN=", "gh pr list"]),
    ("github refresh token", f"refresh with {GH_REFRESH} before it expires",
     GH_REFRESH, "github_token", ["refresh with", "before it expires"]),
    ("github fine grained personal access token", f"GITHUB_TOKEN: {GH_FINE}\nREPO: acme/app",
     GH_FINE, "github_token", ["GITHUB_TOKEN: ", "REPO: acme/app"]),
    ("gitlab token in a clone url", f"git clone https://oauth2:{GITLAB}@gitlab.com/acme/app.git",
     GITLAB, "gitlab_token", ["git clone https://oauth2:", "@gitlab.com/acme/app.git"]),
    ("gitlab token in a request header", f'curl --header "PRIVATE-TOKEN: {GITLAB}" https://gitlab.example/api/v4/projects',
     GITLAB, "gitlab_token", ["curl --header", "https://gitlab.example/api/v4/projects"]),
    # --- OpenAI / Anthropic ------------------------------------------------
    ("openai legacy key in dotenv", f"OPENAI_API_KEY={OPENAI_LEGACY}\nMODEL=gpt-4o",
     OPENAI_LEGACY, "openai_key", ["OPENAI_API_KEY=", "MODEL=gpt-4o"]),
    ("openai project key in python", f'client = OpenAI(api_key="{OPENAI_PROJECT}")  # temporary',
     OPENAI_PROJECT, "openai_key", ["client = OpenAI(api_key=", "# temporary"]),
    ("openai key in an error message", f"Incorrect API key provided: {OPENAI_LEGACY}. Check your dashboard.",
     OPENAI_LEGACY, "openai_key", ["Incorrect API key provided:", "Check your dashboard."]),
    ("anthropic key in dotenv", f"ANTHROPIC_API_KEY={ANTHROPIC}\nDEBUG=1",
     ANTHROPIC, "anthropic_key", ["ANTHROPIC_API_KEY=", "DEBUG=1"]),
    ("anthropic key in a curl header", f"curl https://api.anthropic.com/v1/messages -H 'x-api-key: {ANTHROPIC}' -d @req.json",
     ANTHROPIC, "anthropic_key", ["curl https://api.anthropic.com/v1/messages", "-d @req.json"]),
    # --- Slack ---------------------------------------------------------------
    ("slack bot token in config", f"slack:\n  bot_token: {SLACK_BOT}\n  channel: '#deploys'",
     SLACK_BOT, "slack_token", ["slack:", "bot_token: ", "channel: '#deploys'"]),
    ("slack user token in json", f'{{"ok": true, "access_token": "{SLACK_USER}"}}',
     SLACK_USER, "slack_token", ['"ok": true', '"access_token"']),
    ("slack incoming webhook url", f"SLACK_WEBHOOK_URL=https://hooks.slack.com/services/{SLACK_HOOK_PATH} # alerts",
     SLACK_HOOK_PATH, "slack_token", ["SLACK_WEBHOOK_URL=https://hooks.slack.com/services/", "# alerts"]),
    # --- Stripe / Google / npm -----------------------------------------------
    ("stripe live secret key", f"Stripe.api_key = '{STRIPE_SECRET}'\ncharge = Stripe::Charge.create",
     STRIPE_SECRET, "stripe_key", ["Stripe.api_key = '", "charge = Stripe::Charge.create"]),
    ("stripe restricted key", f"STRIPE_RESTRICTED_KEY={STRIPE_RESTRICTED} node worker.js",
     STRIPE_RESTRICTED, "stripe_key", ["STRIPE_RESTRICTED_KEY=", "node worker.js"]),
    ("stripe publishable key", f"const stripe = Stripe('{STRIPE_PUBLISHABLE}');",
     STRIPE_PUBLISHABLE, "stripe_key", ["const stripe = Stripe('", "');"]),
    ("google api key in a url", f"GET https://maps.googleapis.com/maps/api/geocode/json?address=Paris&key={GOOGLE} HTTP/1.1",
     GOOGLE, "google_api_key", ["GET https://maps.googleapis.com/maps/api/geocode/json?address=Paris&key=", "HTTP/1.1"]),
    ("google api key in firebase config", f'const firebaseConfig = {{ apiKey: "{GOOGLE}", projectId: "demo" }};',
     GOOGLE, "google_api_key", ["const firebaseConfig", 'projectId: "demo"']),
    ("npm token in npmrc", f"//registry.npmjs.org/:_authToken={NPM}\nalways-auth=true",
     NPM, "npm_token", ["//registry.npmjs.org/:_authToken=", "always-auth=true"]),
    ("npm token in ci env", f"env:\n  NPM_TOKEN: {NPM}\nsteps: []",
     NPM, "npm_token", ["env:", "NPM_TOKEN: ", "steps: []"]),
    # --- private keys --------------------------------------------------------
    ("rsa private key block", f"key file:\n{RSA_BLOCK}\nend of file",
     RSA_LINE, "private_key", ["key file:", "end of file"]),
    ("openssh private key block", f"~/.ssh/id_ed25519 contains\n{OPENSSH_BLOCK}\n(do not share)",
     OPENSSH_LINE, "private_key", ["~/.ssh/id_ed25519 contains", "(do not share)"]),
    ("ec private key block", f"tls:\n{EC_BLOCK}\ndone",
     EC_LINE, "private_key", ["tls:", "done"]),
    ("dsa private key block", f"legacy {DSA_BLOCK} legacy",
     DSA_LINE, "private_key", ["legacy "]),
    ("pkcs8 private key block", f"server.key:\n{PLAIN_BLOCK}\n",
     PLAIN_LINE, "private_key", ["server.key:"]),
    ("encrypted private key block", f"{ENCRYPTED_BLOCK}\npassphrase is in the vault",
     ENCRYPTED_LINE, "private_key", ["passphrase is in the vault"]),
    ("pgp private key block", f"gpg --export-secret-keys prints\n{PGP_BLOCK}\nthen quit",
     PGP_LINE, "private_key", ["gpg --export-secret-keys prints", "then quit"]),
    ("private key inside a service account json",
     '{"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----\\n' + JSON_KEY_BODY
     + '\\n-----END PRIVATE KEY-----\\n", "client_email": "bot@demo.iam"}',
     JSON_KEY_BODY, "private_key", ['"type": "service_account"', '"client_email": "bot@demo.iam"']),
    # --- JWT / bearer --------------------------------------------------------
    ("jwt in a cookie header", f"Cookie: theme=dark; session={JWT}; lang=en",
     JWT, "jwt", ["Cookie: theme=dark; session=", "; lang=en"]),
    ("jwt in an oauth response", f'{{"id_token": "{JWT}", "expires_in": 3600}}',
     JWT, "jwt", ['"id_token"', '"expires_in": 3600']),
    ("bearer token in a curl command", f'curl -H "Authorization: Bearer {OPAQUE}" https://api.example.com/v1/me',
     OPAQUE, "bearer_token", ['curl -H "Authorization: Bearer ', '" https://api.example.com/v1/me']),
    ("bearer token in a json header map", f'headers = {{"Authorization": "Bearer {OPAQUE}", "Accept": "application/json"}}',
     OPAQUE, "bearer_token", ['"Authorization": "Bearer ', '"Accept": "application/json"']),
    ("basic credentials in an http request", f"GET /admin HTTP/1.1\nHost: intranet\nAuthorization: Basic {BASIC}\n\n",
     BASIC, "bearer_token", ["GET /admin HTTP/1.1", "Host: intranet", "Authorization: Basic "]),
    ("bearer token in a raw http log", f"> authorization: bearer {OPAQUE}\n< HTTP/2 200",
     OPAQUE, "bearer_token", ["> authorization: bearer ", "< HTTP/2 200"]),
    # --- passwords in URLs ---------------------------------------------------
    ("postgres url password", "DATABASE_URL=postgres://app_user:" + PASSWORD + "@db.internal:5432/app?sslmode=require",
     PASSWORD, "url_password", ["DATABASE_URL=postgres://app_user:", "@db.internal:5432/app?sslmode=require"]),
    ("redis url with empty user", "REDIS_URL=redis://:" + "r3dis" + "Pa55word" + "@cache:6379/0",
     "r3disPa55word", "url_password", ["REDIS_URL=redis://:", "@cache:6379/0"]),
    ("mongodb srv url password", "mongodb+srv://admin:" + "M0ngo" + "Secr3t" + "@cluster0.abcde.mongodb.net/test",
     "M0ngoSecr3t", "url_password", ["mongodb+srv://admin:", "@cluster0.abcde.mongodb.net/test"]),
    ("https url with credentials", "pip install --index-url https://ci:" + "pyp1" + "Token9" + "@pypi.acme.dev/simple pkg",
     "pyp1Token9", "url_password", ["pip install --index-url https://ci:", "@pypi.acme.dev/simple pkg"]),
    ("amqp url in yaml", "broker:\n  url: amqp://guest:" + "Rabb1t" + "MQpw" + "@rabbit:5672//\n",
     "Rabb1tMQpw", "url_password", ["broker:", "url: amqp://guest:", "@rabbit:5672//"]),
    # --- password / secret assignments ---------------------------------------
    ("exported db password", "export DB_PASSWORD=hunter2\nexport DB_USER=app",
     "hunter2", "password_assignment", ["export DB_PASSWORD=", "export DB_USER=app"]),
    ("json password field", '{"username": "admin", "password": "hunter2", "remember": true}',
     "hunter2", "password_assignment", ['"username": "admin"', '"password": "', '"remember": true']),
    ("yaml password", "database:\n  user: app\n  password: " + PASSWORD + "\n  port: 5432",
     PASSWORD, "password_assignment", ["database:", "user: app", "password: ", "port: 5432"]),
    ("ini passwd", "[client]\nuser = root\npasswd = S3cure" + "Pa55\nhost = localhost",
     "S3curePa55", "password_assignment", ["[client]", "user = root", "passwd = ", "host = localhost"]),
    ("python pwd literal", 'pwd = "c0rrect-h0rse"\nconnect(host, pwd)',
     "c0rrect-h0rse", "password_assignment", ["pwd = \"", "connect(host, pwd)"]),
    ("generic secret in dotenv", "SECRET=" + "Zx8vQ2mN4pL6" + "\nPORT=8080",
     "Zx8vQ2mN4pL6", "password_assignment", ["SECRET=", "PORT=8080"]),
    ("api key assignment", "api_key=" + "4f9a8c7e6d5b4a39" + "28171605f4e3d2c1" + " python sync.py",
     "4f9a8c7e6d5b4a3928171605f4e3d2c1", "password_assignment", ["api_key=", "python sync.py"]),
    ("apikey yaml", "weather:\n  apikey: " + "7Hq2Lm9Xz4Rt8Vb3" + "\n  units: metric",
     "7Hq2Lm9Xz4Rt8Vb3", "password_assignment", ["weather:", "apikey: ", "units: metric"]),
    ("token assignment", "token=" + "qx8Qm2Lz9Rt4Vb7Np3" + " ./deploy.sh",
     "qx8Qm2Lz9Rt4Vb7Np3", "password_assignment", ["token=", "./deploy.sh"]),
    ("auth token single quoted", "auth_token: '" + "aZ9xY8wV7uT6" + "'\nretries: 3",
     "aZ9xY8wV7uT6", "password_assignment", ["auth_token: '", "retries: 3"]),
    ("access token in a query string", "GET /callback?access_token=" + "b7Yt2Qm9Lx4Zp8" + "&state=xyz HTTP/1.1",
     "b7Yt2Qm9Lx4Zp8", "password_assignment", ["GET /callback?access_token=", "&state=xyz HTTP/1.1"]),
    ("client secret in python", 'client_secret = "' + "cs-9f8e7d6c5b4a" + '"\nclient_id = "web"',
     "cs-9f8e7d6c5b4a", "password_assignment", ['client_secret = "', 'client_id = "web"']),
    ("docker compose root password", "environment:\n  MYSQL_ROOT_PASSWORD: " + "r00tPw" + "Z9\n  MYSQL_DATABASE: app",
     "r00tPwZ9", "password_assignment", ["environment:", "MYSQL_ROOT_PASSWORD: ", "MYSQL_DATABASE: app"]),
    ("password on a command line", "mysql -u root --password " + "Hunt3r" + "Two" + " shop < dump.sql",
     "Hunt3rTwo", "password_assignment", ["mysql -u root --password ", "shop < dump.sql"]),
    ("password element in xml", "<datasource>\n  <password>" + "Xm1" + "Secret" + "</password>\n</datasource>",
     "Xm1Secret", "password_assignment", ["<datasource>", "<password>", "</password>", "</datasource>"]),
    ("pgpassword prefix", "PGPASSWORD=" + "pgS3cret" + "9 psql -h db -U app",
     "pgS3cret9", "password_assignment", ["PGPASSWORD=", "psql -h db -U app"]),
    ("java properties password", "spring.datasource.username=app\nspring.datasource.password=" + "J4va" + "Pr0ps",
     "J4vaPr0ps", "password_assignment", ["spring.datasource.username=app", "spring.datasource.password="]),
    ("php password variable", "$password = '" + "php" + "Secr3t!" + "';\n$user = 'admin';",
     "phpSecr3t!", "password_assignment", ["$password = '", "$user = 'admin';"]),
    ("django secret key", "SECRET_KEY = '" + "django-insecure-" + "8x#k2@m9!p" + "'\nDEBUG = True",
     "django-insecure-8x#k2@m9!p", "password_assignment", ["SECRET_KEY = '", "DEBUG = True"]),
    ("api key request header", "x-api-key: " + "0123456789abcdef" + "0123\ncontent-type: application/json",
     "0123456789abcdef0123", "password_assignment", ["x-api-key: ", "content-type: application/json"]),
    ("go struct password field", 'cfg := Config{\n\tUser:     "svc",\n\tPassword: "' + "G0lang" + "Pw" + '",\n}',
     "G0langPw", "password_assignment", ["cfg := Config{", 'User:     "svc"', "Password: "]),
    ("connection string password", "Server=db;User Id=sa;Password=" + "Str0ng" + "!Pass" + ";Encrypt=true",
     "Str0ng!Pass", "password_assignment", ["Server=db;User Id=sa;Password=", ";Encrypt=true"]),
    ("dictionary word password in compose file", "services:\n  db:\n    environment:\n      POSTGRES_PASSWORD: supersecret\n",
     "supersecret", "password_assignment", ["services:", "POSTGRES_PASSWORD: "]),
    ("all lowercase secret key", "SECRET_KEY=" + "keyboardcatdog" + "\nDEBUG=false",
     "keyboardcatdog", "password_assignment", ["SECRET_KEY=", "DEBUG=false"]),
]

# Text that merely resembles a secret: must come back byte-identical, counts empty.
_SHA1 = fake(40, HEX)
_SHA256 = fake(64, HEX)
_SHA512 = fake(128, HEX)
_PNG = "iVBORw0KGgo" + fake(4000, B64) + "=="
LOOKALIKES = [
    ("git sha in a log line", f"commit {_SHA1}\nAuthor: Dev <dev@example.com>"),
    ("short git shas", "fixed in a1b2c3d, reverted by 9f8e7d6c5b4a and 0123abcd"),
    ("uuid", "request id 123e4567-e89b-12d3-a456-426614174000 failed"),
    ("sha256 checksum line", f"{_SHA256}  dist/app.tar.gz"),
    ("sha512 digest", f"sha512: {_SHA512}"),
    ("npm lockfile integrity", '"integrity": "sha512-' + fake(86, B64) + '==",\n"resolved": "https://registry.npmjs.org/x/-/x-1.0.0.tgz"'),
    ("poetry lock hash", '{file = "requests-2.31.0-py3-none-any.whl", hash = "sha256:' + _SHA256 + '"},'),
    ("cargo lock checksum", '[[package]]\nname = "serde"\nversion = "1.0.0"\nchecksum = "' + _SHA256 + '"'),
    ("data uri image", f'<img src="data:image/png;base64,{_PNG}" alt="logo">'),
    ("markdown inline image", f"![diagram](data:image/jpeg;base64,/9j/{fake(2000, B64)}=)"),
    ("password reset prose", "We redesigned the password reset flow and the forgot-password email."),
    ("token bucket prose", "Rate limiting uses the token bucket algorithm with a burst of 20."),
    ("config key mention", "set password_min_length in config to enforce longer passwords"),
    ("numeric password policy", "password_min_length=12\npassword_max_age_days: 90"),
    ("angle bracket placeholder", "password=<your password>"),
    ("braced env placeholder", "password=${DB_PASSWORD}"),
    ("dollar env placeholder", "password=$DB_PASSWORD"),
    ("masked password", "password: ****"),
    ("none token", "token=None"),
    ("empty password", 'password=""'),
    ("github actions secret reference", "token: ${{ secrets.GITHUB_TOKEN }}"),
    ("ansible vault reference", 'password: "{{ vault_db_password }}"'),
    ("aws iam role arn", "arn:aws:iam::123456789012:role/ExampleRole"),
    ("aws secrets manager arn", '"Resource": "arn:aws:secretsmanager:us-east-1:123456789012:secret:prod/db-AbCdEf"'),
    ("sk inside ordinary words", "task-sk-1 is blocked by the desk-lamp and risk-averse sk-1 tickets"),
    ("python token identifiers", "token_count = len(tokens)\nmax_tokens=4096\nif token_type == 'bearer': pass"),
    ("url with user but no password", "https://user@host.example.com/path and ssh://git@github.com/acme/app.git"),
    ("url with port but no credentials", "postgres://localhost:5432/db and http://127.0.0.1:8080/health?x=1"),
    ("token prefix mentioned alone", "classic tokens start with ghp_ and fine grained ones with github_pat_"),
    ("other prefixes mentioned alone", "keys look like AKIA..., AIza..., xoxb-..., sk_live_..., npm_... and glpat-..."),
    ("jwt prefix alone", "a JWT starts with eyJ because base64 of {\" is eyJ; eyJhbGciOiJIUzI1NiJ9 is only a header"),
    ("public key block", "-----BEGIN PUBLIC KEY-----\n" + fake(64, B64) + "\n-----END PUBLIC KEY-----"),
    ("certificate block", "-----BEGIN CERTIFICATE-----\n" + fake(64, B64) + "\n-----END CERTIFICATE-----"),
    ("ssh public key", "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI" + fake(43, B64) + " dev@laptop"),
    ("private key header mentioned in prose", "the file must start with -----BEGIN RSA PRIVATE KEY----- exactly"),
    ("private key delimiters described in prose",
     "it starts with `-----BEGIN OPENSSH PRIVATE KEY-----` and ends with `-----END OPENSSH PRIVATE KEY-----`."),
    ("slack-like words", "hugs and xoxo-see-you-tomorrow-everyone"),
    ("python function signature", "def login(username: str, password: str = None) -> Token:"),
    ("password read from the environment", 'password = os.environ["DB_PASSWORD"]\ntoken = os.getenv("API_TOKEN")'),
    ("token read from a request", 'token = request.headers.get("Authorization")\nuser = auth.verify(token)'),
    ("keyword arguments passing variables", "client = Client(host, user=user, password=password, api_key=api_key)"),
    ("docstring parameter", ":param password: The plaintext password to hash.\n:param token: Optional reset token."),
    ("parser error prose", "SyntaxError: Unexpected token: import"),
    ("authorization header with a variable", 'curl -H "Authorization: Bearer $TOKEN" -H "Authorization: Bearer <token>"'),
    ("typed settings fields", "class Settings(BaseSettings):\n    api_key: SecretStr\n    db_password: Optional[str] = None"),
    ("pwd environment variable", "PWD=/home/dev/project\nOLDPWD=/home/dev"),
    ("comparison with a token", "if token == expected_token and password != '':"),
    ("uuid token placeholder", 'api_key = "YOUR_API_KEY"\ntoken: "your-token-here"'),
    ("bypass and passport words", "bypass=true\npassport: required\npasswordless login is enabled"),
    ("html password input", '<input type="password" name="password" autocomplete="current-password">'),
    ("variables named after tokens", 'paginate(next_token=next_token)\nreturn {"NextToken": next_token, "items": items}'),
    ("header names and sample values", 'HEADER = "X-Auth-Token"\nclient_secret="my-client-secret"  # sample'),
    ("javascript object of variables", "const opts = { password: dbPassword, apiKey: this.apiKey, token: _token };"),
]


# ---------------------------------------------------------------------------
# Secrets are replaced, context survives
# ---------------------------------------------------------------------------


def test_the_tables_are_big_enough():
    assert len(POSITIVE) >= 50
    assert len(LOOKALIKES) >= 30
    assert {case[3] for case in POSITIVE} == set(REDACTION_TYPES)


@pytest.mark.parametrize("text, secret, kind, survivors", [c[1:] for c in POSITIVE], ids=[c[0] for c in POSITIVE])
def test_secret_is_replaced_by_a_typed_marker_and_context_survives(text, secret, kind, survivors):
    assert secret in text  # the case itself is well formed
    out, counts = redact(text)
    assert secret not in out
    assert marker(kind) in out
    assert counts.get(kind, 0) >= 1
    for word in survivors:
        assert word in out, f"{word!r} lost from {out!r}"


@pytest.mark.parametrize("text", [c[1] for c in LOOKALIKES], ids=[c[0] for c in LOOKALIKES])
def test_lookalike_comes_back_byte_identical(text):
    out, counts = redact(text)
    assert out == text
    assert counts == {}


def test_only_the_value_of_an_assignment_is_replaced():
    assert redact('"password": "hunter2"')[0] == '"password": "[REDACTED:password_assignment]"'
    assert redact("export DB_PASSWORD=hunter2")[0] == "export DB_PASSWORD=[REDACTED:password_assignment]"
    assert redact("passwd: hunter2")[0] == "passwd: [REDACTED:password_assignment]"
    assert redact("pwd = 'hunter2'")[0] == "pwd = '[REDACTED:password_assignment]'"


def test_only_the_password_of_a_url_is_replaced():
    out, counts = redact("postgres://app:" + PASSWORD + "@db.internal:5432/app")
    assert out == "postgres://app:[REDACTED:url_password]@db.internal:5432/app"
    assert counts == {"url_password": 1}


def test_a_whole_private_key_block_becomes_one_marker():
    out, counts = redact("before\n" + RSA_BLOCK + "\nafter")
    assert out == "before\n[REDACTED:private_key]\nafter"
    assert counts == {"private_key": 1}


def test_a_truncated_private_key_is_still_removed():
    text = "-----BEGIN RSA PRIVATE KEY-----\n" + fake(64, B64) + "\n" + fake(64, B64) + "\n\n(rest of paste lost)"
    out, counts = redact(text)
    assert counts == {"private_key": 1}
    assert out == "[REDACTED:private_key]\n\n(rest of paste lost)"


def test_anthropic_key_is_not_labelled_openai():
    out, counts = redact(f"ANTHROPIC_API_KEY={ANTHROPIC}")
    assert counts == {"anthropic_key": 1}
    assert "openai_key" not in out


def test_a_specific_token_is_not_counted_again_as_an_assignment():
    out, counts = redact(f"GITHUB_TOKEN={GH_CLASSIC}\nOPENAI_API_KEY='{OPENAI_LEGACY}'")
    assert counts == {"github_token": 1, "openai_key": 1}
    assert out == "GITHUB_TOKEN=[REDACTED:github_token]\nOPENAI_API_KEY='[REDACTED:openai_key]'"


def test_counts_add_up_over_several_secrets():
    text = f"a={AWS_ID} b={AWS_TEMP_ID}\npassword: hunter2\nsecret: {fake(20)}\n{JWT}"
    out, counts = redact(text)
    assert counts == {"aws_access_key": 2, "password_assignment": 2, "jwt": 1}
    assert out.count("[REDACTED:") == 5


def test_counts_only_name_known_types_with_positive_integers():
    text = "\n".join(c[1] for c in POSITIVE) + "\n<private>x</private>"
    _, counts = redact(text)
    assert set(counts) <= set(REDACTION_TYPES) | {PRIVATE_TYPE}
    assert all(isinstance(n, int) and n > 0 for n in counts.values())


def test_case_of_keys_does_not_matter():
    for key in ("PASSWORD", "Password", "db_Password", "ApiKey", "API-KEY", "Client_Secret"):
        out, counts = redact(f"{key}=Zq8{key[:2]}x7Lm2")
        assert counts == {"password_assignment": 1}, key
        assert out == f"{key}=[REDACTED:password_assignment]"


# ---------------------------------------------------------------------------
# <private> spans
# ---------------------------------------------------------------------------


def test_a_private_span_is_removed_entirely():
    assert redact("keep <private>my home address</private> this") == ("keep  this", {"private": 1})


def test_several_private_spans_are_each_removed_and_counted():
    out, counts = redact("a<private>1</private>b<private>2</private>c<private>3</private>d")
    assert out == "abcd"
    assert counts == {"private": 3}


def test_a_private_span_may_cover_many_lines():
    text = "start\n<private>\nline one\nline two\n</private>\nend"
    assert redact(text) == ("start\n\nend", {"private": 1})


def test_private_tags_are_case_insensitive():
    assert redact("x<PRIVATE>y</Private>z<Private reason='pii'>w</PRIVATE >v") == ("xzv", {"private": 2})


def test_an_unclosed_private_tag_drops_the_rest_of_the_text():
    assert redact("visible <private>everything after\nthis is gone") == ("visible ", {"private": 1})


def test_a_nested_private_span_is_removed_up_to_its_outer_close():
    assert redact("a<private>b<private>c</private>d</private>e") == ("ae", {"private": 1})


def test_other_tags_that_start_with_private_are_not_private_spans():
    text = "<privateer>ship</privateer> <private-notes>n</private-notes> <private/>"
    assert redact(text) == (text, {})


def test_secrets_inside_a_private_span_are_dropped_with_it_and_not_counted():
    out, counts = redact(f"ok <private>password: hunter2 {GH_CLASSIC}</private> ok")
    assert out == "ok  ok"
    assert counts == {"private": 1}


def test_private_spans_stay_when_drop_private_is_false_but_secrets_inside_go():
    out, counts = redact(f"<private>key {GH_CLASSIC}</private>", drop_private=False)
    assert out == "<private>key [REDACTED:github_token]</private>"
    assert counts == {"github_token": 1}


# ---------------------------------------------------------------------------
# disabled mode
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("text", [c[1] for c in POSITIVE[::7]])
def test_disabled_mode_returns_secrets_unchanged(text):
    assert redact(text, enabled=False) == (text, {})


def test_disabled_mode_still_drops_private_spans():
    text = f"token={GH_CLASSIC} <private>pii</private> end"
    assert redact(text, enabled=False) == (f"token={GH_CLASSIC}  end", {"private": 1})


def test_disabled_mode_without_dropping_private_changes_nothing():
    text = f"token={GH_CLASSIC} <private>pii</private> end"
    assert redact(text, enabled=False, drop_private=False) == (text, {})


# ---------------------------------------------------------------------------
# idempotence
# ---------------------------------------------------------------------------

_MIXED = "\n".join(c[1] for c in POSITIVE + LOOKALIKES)


@pytest.mark.parametrize(
    "text",
    [c[1] for c in POSITIVE] + [c[1] for c in LOOKALIKES] + [_MIXED, "a<pri<private>x</private>vate>b</private>c"],
    ids=[c[0] for c in POSITIVE] + [c[0] for c in LOOKALIKES] + ["everything at once", "spliced private tag"],
)
def test_redacting_twice_changes_nothing_more(text):
    once, _ = redact(text)
    twice, counts = redact(once)
    assert twice == once
    assert counts == {}


# ---------------------------------------------------------------------------
# robustness and speed
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "",
        "\x00",
        "password=\x00hunter2\x00",
        "\ud800 lone high surrogate, \udfff lone low one",
        "token=\ud83d" + fake(20),
        "postgres://u:\udc80pw@host/db",
        "<private>\ud800",
        "\u0130stanbul PASSWORD=Zq8x7Lm2 \u212a",  # characters whose lower() changes length
        "-----BEGIN RSA PRIVATE KEY-----",
        "<private",
        "://:@",
        "password=" * 1000,
        "\\" * 100 + '"' * 100,
    ],
)
def test_never_raises_on_odd_strings(text):
    out, counts = redact(text)
    assert isinstance(out, str)
    assert isinstance(counts, dict)
    assert redact(out)[0] == out


def test_secrets_are_found_next_to_characters_whose_case_folding_changes_length():
    out, counts = redact("\u0130\u0130 DB_PASSWORD=Zq8x7Lm2 and " + GH_CLASSIC)
    assert "Zq8x7Lm2" not in out and GH_CLASSIC not in out
    assert counts == {"password_assignment": 1, "github_token": 1}


def test_random_garbage_never_raises_and_is_stable():
    rng = random.Random(7)
    alphabet = ALNUM + " \t\n=:;,.-_/+@#$%&*()[]{}<>\"'`\\|?!\x00\ud800\u00e9\u0130"
    for _ in range(300):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 400)))
        out, _ = redact(text)
        assert redact(out)[0] == out


def _megabyte() -> str:
    chunk = (
        "def handler(event):\n"
        "    token_count = len(event['tokens'])  # the token bucket refills\n"
        "    url = 'postgres://localhost:5432/db'\n"
        f"    checksum = '{_SHA256}'\n"
        "    password_min_length = 12\n"
        "    return {'ok': True, 'id': '123e4567-e89b-12d3-a456-426614174000'}\n"
        "The password reset flow sends a link; see https://example.com/docs?page=2.\n"
    )
    return (chunk * (1_000_000 // len(chunk) + 1))[:1_000_000]


def test_a_megabyte_of_ordinary_text_is_fast_and_untouched():
    text = _megabyte()
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        out, counts = redact(text)
        best = min(best, time.perf_counter() - start)
    assert out == text and counts == {}
    # typically ~20 ms; the bound is loose so that a slow CI machine passes
    assert best < 0.5


def test_a_megabyte_with_secrets_scattered_through_it_is_fast():
    text = _megabyte()
    pieces = [text[i : i + 10_000] + f"\nexport API_TOKEN={fake(32)}\n" for i in range(0, len(text), 10_000)]
    text = "".join(pieces)
    start = time.perf_counter()
    out, counts = redact(text)
    elapsed = time.perf_counter() - start
    assert counts == {"password_assignment": len(pieces)}
    assert elapsed < 0.5


def test_non_string_input_is_coerced_rather_than_raising():
    assert redact(None) == ("", {})  # type: ignore[arg-type]
    assert redact(b"password=hunter2") == ("password=[REDACTED:password_assignment]", {"password_assignment": 1})  # type: ignore[arg-type]
