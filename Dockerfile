# mockserver as a container: docker build -t mockserver . && docker run -p 8000:8000 mockserver
FROM python:3.11-slim

WORKDIR /app
COPY pyproject.toml README.md ./
COPY mockserver ./mockserver
COPY fixtures ./fixtures
RUN pip install --no-cache-dir . && rm -rf /app/mockserver

# Inside a container the server must listen on all interfaces; every option has a MOCKSERVER_* variable.
ENV MOCKSERVER_HOST=0.0.0.0 \
    MOCKSERVER_PORT=8000
EXPOSE 8000
USER nobody
HEALTHCHECK --interval=5s --timeout=2s --retries=10 \
    CMD python -c "import os, urllib.request; urllib.request.urlopen(f'http://127.0.0.1:{os.environ[\"MOCKSERVER_PORT\"]}/health')"
CMD ["mockserver", "serve"]
