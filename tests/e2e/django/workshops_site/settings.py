"""The workshop sign-up site: one app (events), its database from the
environment, nothing else.

EVENTS_DB_DSN is a libpq connection string ("host=127.0.0.1 port=5432
user=app dbname=events" or a postgresql:// URI); EVENTS_DB_HOST, _PORT,
_NAME, _USER and _PASSWORD override its parts. Keys Django has no setting
for (sslmode, connect_timeout, ...) go to libpq as they are.
"""
import os

from psycopg2.extensions import parse_dsn

SECRET_KEY = "workshops-site-test-only"  # signs nothing: no sessions, no forms
DEBUG = False
ALLOWED_HOSTS = ["testserver", "localhost", "127.0.0.1"]
INSTALLED_APPS = ["events"]
MIDDLEWARE = []
ROOT_URLCONF = "workshops_site.urls"
USE_TZ = True
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# What the sign-up view waits for the payment provider, in seconds.
PAYMENT_DELAY_SECONDS = float(os.environ.get("EVENTS_PAYMENT_DELAY", "0.05"))


def _database():
    options = parse_dsn(os.environ.get("EVENTS_DB_DSN", ""))
    settings = {"ENGINE": "django.db.backends.postgresql", "OPTIONS": {}}
    for setting, keyword in (("HOST", "host"), ("PORT", "port"), ("NAME", "dbname"),
                             ("USER", "user"), ("PASSWORD", "password")):
        settings[setting] = os.environ.get("EVENTS_DB_" + setting, options.pop(keyword, ""))
    settings["OPTIONS"].update(options)
    return settings


DATABASES = {"default": _database()}
