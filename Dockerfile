# GPU Advisor Bot. Build: docker build -t gpu-advisor-bot .   Run: docker compose up -d
# The token is never in the image: it comes from the environment (.env through compose).
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

# A CJK font for the Chinese labels of the 📊 chart (bot/chart.py; docs/answers.md): without
# one the chart is drawn with English labels.
RUN apt-get update \
    && apt-get install -y --no-install-recommends fonts-wqy-microhei \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /app
# Dependencies first, so a code change does not reinstall them.
COPY pyproject.toml README.md ./
# Every top-level package `python -m bot` imports (tests/test_container.py starts the bot
# from exactly these files), and the data read beside them.
COPY advisor ./advisor
COPY bot ./bot
COPY hublookup ./hublookup
COPY migrations ./migrations
COPY templates ./templates
# Editable: the engine reads templates/ and migrations/ beside the package, from /app.
RUN pip install -e . \
    && useradd --system --uid 10001 --no-create-home --home-dir /nonexistent advisor \
    && mkdir -p /data && chown advisor:advisor /data && chmod 0700 /data

# Settings the container needs; everything else (TELEGRAM_BOT_TOKEN, WEBHOOK_*) at run time.
ENV DATABASE_PATH=/data/advisor.sqlite3 \
    HEALTH_PORT=8080 \
    WEBHOOK_LISTEN=0.0.0.0 \
    LOG_FORMAT=json

USER advisor
VOLUME ["/data"]
EXPOSE 8080
# /healthz on the port the same settings make the bot listen on (bot/__main__.py healthcheck)
HEALTHCHECK --interval=30s --timeout=10s --start-period=30s --retries=3 \
    CMD ["python", "-m", "bot", "healthcheck"]
CMD ["python", "-m", "bot"]
