FROM python:3.11-slim
WORKDIR /app
COPY pyproject.toml README.md ./
COPY schedviz schedviz
COPY webui webui
COPY worker worker
COPY manage.py ./
RUN pip install --no-cache-dir .
# The static files (htmx, the CSS) collected into the image, where WhiteNoise serves them from.
RUN python manage.py collectstatic --noinput
ENV PYTHONUNBUFFERED=1
