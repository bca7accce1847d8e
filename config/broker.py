"""kombu's Redis transport, with the one change that keeps a Celery worker alive through a broker outage.

What killed the worker (Celery 5.7 / kombu 5.7, reproduced on the first outage while the worker held a countdown
task): on a lost connection Celery's consumer first calls ``Connection.collect()``, which closes the channel and
then detaches the transport (``transport.client = None``). The channel's close fails half-way (it reads the BRPOP
that was in flight, which raises the connection error), so the channel stays open. The consumer then calls
``Connection.close()``; the channel's second close drops its connection pools and asks the QoS to put the
unacknowledged messages back, which builds a new pool from ``transport.client.hostname`` and raises
``AttributeError: 'NoneType' object has no attribute 'hostname'``. That is not a connection error, so nothing
between it and the worker catches it: "Unrecoverable error", the worker exits.

Here a channel whose transport is detached answers a pool request with a Redis ``ConnectionError`` instead, the
error kombu and Celery already treat as "broker gone" and ignore while closing. Nothing is lost by not restoring
at that moment: Redis itself could not be reached, and the messages stay in Redis's unacked index, from which any
worker's ``restore_visible`` puts them back after the visibility timeout; the work they stood for is found sooner
by beat (``aggregates_reconcile``, ``jobs_recover``), which reads the database, not the queue.
"""

from __future__ import annotations

from typing import Any

from kombu.transport import redis as kombu_redis
from redis.exceptions import ConnectionError as RedisConnectionError


class Channel(kombu_redis.Channel):
    def _connparams(self, asynchronous: bool = False) -> Any:
        if self.connection is None or self.connection.client is None:
            raise RedisConnectionError("the broker connection was closed after an outage; not reconnecting from it")
        return super()._connparams(asynchronous=asynchronous)  # type: ignore[misc]  # kombu's private hook, untyped


class Transport(kombu_redis.Transport):
    Channel = Channel
