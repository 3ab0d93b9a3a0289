FROM python:3.11-slim
WORKDIR /app
COPY pyproject.toml README.md ./
COPY schedviz schedviz
COPY webui webui
COPY worker worker
COPY manage.py ./
RUN pip install --no-cache-dir .
ENV PYTHONUNBUFFERED=1
