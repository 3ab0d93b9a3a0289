FROM python:3.11-slim
WORKDIR /app
COPY pyproject.toml README.md ./
COPY schedviz schedviz
COPY webui webui
COPY worker worker
COPY manage.py ./
RUN pip install --no-cache-dir .
# The static files (htmx, the CSS) collected into the image, where WhiteNoise serves them from,
# under names hashed by content (cached for a year; schedviz/settings.py, STATIC_MANIFEST).
RUN SCHEDVIZ_STATIC_MANIFEST=true python manage.py collectstatic --noinput
ENV PYTHONUNBUFFERED=1
