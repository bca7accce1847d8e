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
# gunicorn reads its settings (workers, threads, keep-alive, timeouts) from config/gunicorn.py, overridable from the
# environment (WEB_CONCURRENCY, WEB_THREADS, GUNICORN_*).
CMD ["gunicorn", "-c", "config/gunicorn.py", "config.wsgi"]
