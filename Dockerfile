FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
WORKDIR /app
COPY requirements.txt .
RUN pip install --no-cache-dir -r requirements.txt
COPY . .
RUN SECRET_KEY=collectstatic-only-placeholder-key-000000000000 python manage.py collectstatic --noinput
RUN useradd --create-home penumbra && mkdir -p /data && chown penumbra /data
USER penumbra
EXPOSE 8000
# gthread: saves wait on PostgreSQL most of the time, so threads overlap them cheaply; about one worker process per
# core, 8 threads each (WEB_CONCURRENCY overrides the worker count, e.g. 2 on a 2-core machine).
CMD ["sh", "-c", "exec gunicorn config.wsgi --bind 0.0.0.0:8000 --worker-class gthread --workers ${WEB_CONCURRENCY:-2} --threads 8 --access-logfile -"]
