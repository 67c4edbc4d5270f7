"""A real oslo.messaging notification listener for the notify tests.

    python listener.py --url rabbit://u:p@127.0.0.1:25683/vhost \
        --exchange magnum --topic notifications [--priority info,error]

It listens with oslo_messaging.get_notification_listener (the way a
consumer such as Ceilometer does) and prints one JSON object per line on
stdout:

- {"ready": true} once the listener consumes;
- one line per notification received: its priority, ctxt, publisher_id,
  event_type, payload and metadata as the endpoint got them, plus "cadf",
  the result of rebuilding the payload with pycadf ("ok" when pycadf
  accepts it and serialises it back to the same JSON, key order included;
  otherwise the reason).

It stops when stdin closes. Logs go to stderr.
"""

import argparse
import datetime
import json
import logging
import sys
import threading
import warnings

from oslo_config import cfg
import oslo_messaging
from pycadf import attachment
from pycadf import cadftype
from pycadf import event
from pycadf import resource
from pycadf import timestamp

PRIORITIES = ("audit", "debug", "info", "warn", "error", "critical", "sample")

_out_lock = threading.Lock()


def emit(obj):
    line = json.dumps(obj, default=str)
    with _out_lock:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def rebuild_resource(d):
    """A pycadf Resource from its dict form; pycadf's validators check
    every standard field as it is set."""
    r = resource.Resource(id=d["id"], typeURI=d["typeURI"], name=d.get("name"))
    for key, value in d.items():
        if key in ("id", "typeURI", "name"):
            continue
        if key == "attachments":
            for a in value:
                r.add_attachment(
                    attachment.Attachment(
                        typeURI=a["typeURI"], content=a["content"], name=a["name"]
                    )
                )
        else:
            setattr(r, key, value)
    if not r.is_valid():
        raise ValueError("resource %s is not valid" % d.get("id"))
    return r


def check_cadf(payload):
    """'ok' when pycadf accepts the payload as an Event, else the reason."""
    try:
        with warnings.catch_warnings():
            # pycadf warns (and accepts) on identifiers that are not UUIDs;
            # Magnum's never are.
            warnings.simplefilter("error")
            if payload.get("typeURI") != cadftype.CADF_VERSION_1_0_0 + "event":
                return "typeURI is %r" % payload.get("typeURI")
            known = {
                "typeURI", "eventType", "id", "eventTime", "action", "outcome",
                "observer", "initiator", "target",
            }
            extra = set(payload) - known
            if extra:
                return "unexpected keys %s" % sorted(extra)
            ev = event.Event(
                eventType=payload["eventType"],
                id=payload["id"],
                eventTime=payload["eventTime"],
                action=payload["action"],
                outcome=payload["outcome"],
                observer=rebuild_resource(payload["observer"]),
                initiator=rebuild_resource(payload["initiator"]),
                target=rebuild_resource(payload["target"]),
            )
            if not ev.is_valid():
                return "event is not valid"
            datetime.datetime.strptime(payload["eventTime"], timestamp.TIME_FORMAT)
            again = json.dumps(ev.as_dict())
            if again != json.dumps(payload):
                return "pycadf serialises it differently: %s" % again
            return "ok"
    except Exception as e:  # report, never crash the listener
        return "%s: %s" % (type(e).__name__, e)


class Endpoint:
    pass


def make_endpoint(priorities):
    ep = Endpoint()
    for p in priorities:
        def handler(ctxt, publisher_id, event_type, payload, metadata, _p=p):
            emit({
                "priority": _p,
                "ctxt": ctxt,
                "publisher_id": publisher_id,
                "event_type": event_type,
                "payload": payload,
                "metadata": metadata,
                "cadf": check_cadf(payload) if isinstance(payload, dict) else "not a dict",
            })
        setattr(ep, p, handler)
    return ep


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", required=True)
    ap.add_argument("--exchange", required=True)
    ap.add_argument("--topic", required=True)
    ap.add_argument("--priority", default=",".join(PRIORITIES))
    args = ap.parse_args()
    priorities = [p for p in args.priority.split(",") if p]
    for p in priorities:
        if p not in PRIORITIES:
            ap.error("unknown priority %s" % p)

    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    conf = cfg.ConfigOpts()
    conf([], project="notify-listener", default_config_files=[])
    transport = oslo_messaging.get_notification_transport(conf, url=args.url)
    targets = [oslo_messaging.Target(topic=args.topic, exchange=args.exchange)]
    listener = oslo_messaging.get_notification_listener(
        transport, targets, [make_endpoint(priorities)], executor="threading"
    )
    # One worker: the lines come out in the order the messages arrive (the
    # threading executor otherwise runs endpoints side by side).
    listener.start(override_pool_size=1)
    emit({"ready": True})
    try:
        sys.stdin.read()
    finally:
        listener.stop()
        listener.wait()
        transport.cleanup()


if __name__ == "__main__":
    main()
