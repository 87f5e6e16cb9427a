# mockserver as a container:
#   docker build -t mockserver . && docker run --rm -p 8000:8000 mockserver
# Every option has a MOCKSERVER_* variable (docker run -e MOCKSERVER_TIME_SCALE=0 ...); see docs/deployment.md.
FROM python:3.11-slim

LABEL org.opencontainers.image.title="mockserver" \
      org.opencontainers.image.description="An OpenAI-compatible fake inference server for offline tests, with service tiers paced at their real speeds." \
      org.opencontainers.image.licenses="MIT" \
      org.opencontainers.image.documentation="docs/deployment.md"

# Inside a container the server listens on all interfaces. It writes the port it serves to
# MOCKSERVER_PORT_FILE, so the health check follows the port however it was chosen
# (-e MOCKSERVER_PORT=9000, or `mockserver serve --port 9000`). SIGTERM stops it cleanly: replies
# in flight get MOCKSERVER_SHUTDOWN_GRACE seconds (default 5), well inside docker stop's 10.
# Listening on every interface exposes the control plane (/_mock/), so it needs an admin token:
# by default a random one is made at start-up and printed in the log; pass your own with
# -e MOCKSERVER_ADMIN_TOKEN=... to script /_mock/ calls (SECURITY.md).
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PYTHONPATH=/app \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    MOCKSERVER_HOST=0.0.0.0 \
    MOCKSERVER_PORT=8000 \
    MOCKSERVER_PORT_FILE=/tmp/mockserver.port \
    MOCKSERVER_ADMIN_TOKEN=generate
EXPOSE 8000
STOPSIGNAL SIGTERM
# Readiness (GET /ready): unhealthy while the shared state (MOCKSERVER_STATE=redis://...) is unreachable.
HEALTHCHECK --interval=5s --timeout=3s --start-period=5s --retries=6 CMD ["mockserver", "health"]
CMD ["mockserver", "serve"]
WORKDIR /app

# The dependencies, in their own layer, rebuilt only when pyproject.toml or constraints.txt changes,
# at the versions constraints.txt pins: an image built next year installs what CI tested. The same
# layer adds the `mockserver` command and a user of its own (the server never runs as root).
COPY pyproject.toml constraints.txt ./
RUN python -c "import tomllib; print('\n'.join(tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies']))" \
      > /tmp/requirements.txt \
 && pip install -r /tmp/requirements.txt -c constraints.txt \
 && rm /tmp/requirements.txt \
 && printf '#!/bin/sh\nexec python -m mockserver "$@"\n' > /usr/local/bin/mockserver \
 && chmod 755 /usr/local/bin/mockserver \
 && useradd --system --uid 10001 --no-create-home --shell /usr/sbin/nologin mockserver
USER 10001

# The source last, as plain files on PYTHONPATH (no build step): a code change rebuilds only
# these two layers, in seconds.
COPY fixtures ./fixtures
COPY mockserver ./mockserver
