"""Read a recorder's MCAP file from its start up to its end or its first damage (a file cut
by a kill ends mid-chunk; a corrupted one fails a CRC), saying where reading stopped."""

from __future__ import annotations

from dataclasses import dataclass, field
import json
from pathlib import Path


@dataclass(frozen=True)
class LogMessage:
    """One message: its channel's topic and encoding, its schema name, bytes and times."""

    topic: str
    encoding: str
    schema_name: str
    data: bytes
    log_time_ns: int
    publish_time_ns: int


@dataclass
class LogContents:
    """What a file holds up to where it could be read."""

    path: Path
    messages: list[LogMessage] = field(default_factory=list)
    metadata: dict[str, dict[str, str]] = field(default_factory=dict)
    attachments: dict[str, bytes] = field(default_factory=dict)
    damage: str | None = None
    """None for a whole file; else where and why reading stopped."""
    schemas: dict[str, tuple[str, bytes]] = field(default_factory=dict)
    """Schema name -> (encoding, data)."""

    def topics(self) -> list[str]:
        """The topics of its messages, in the order they first appear."""
        return list(dict.fromkeys(m.topic for m in self.messages))


def read_log(path: str | Path) -> LogContents:
    """Every message, metadata record and attachment up to the end or the first damage
    (CRCs checked); FileNotFoundError, or ValueError for a file that is not MCAP at all."""
    from mcap.exceptions import InvalidMagic
    from mcap.records import Attachment, Channel, Message, Metadata, Schema
    from mcap.stream_reader import StreamReader
    path = Path(path)
    contents = LogContents(path)
    schemas: dict[int, Schema] = {}
    channels: dict[int, Channel] = {}
    with open(path, 'rb') as stream:
        reader = StreamReader(stream, validate_crcs=True)
        records = reader.records
        try:
            for record in records:
                if isinstance(record, Schema):
                    schemas[record.id] = record
                    contents.schemas[record.name] = (record.encoding, record.data)
                elif isinstance(record, Channel):
                    channels[record.id] = record
                elif isinstance(record, Message):
                    channel = channels[record.channel_id]
                    schema = schemas.get(channel.schema_id)
                    contents.messages.append(LogMessage(
                        channel.topic, channel.message_encoding,
                        schema.name if schema else '', record.data, record.log_time,
                        record.publish_time))
                elif isinstance(record, Metadata):
                    contents.metadata[record.name] = dict(record.metadata)
                elif isinstance(record, Attachment):
                    contents.attachments[record.name] = record.data
        except InvalidMagic as exc:
            if not contents.messages and stream.tell() <= 8:
                raise ValueError(f'{path}: not an MCAP file ({exc})') from None
            contents.damage = _where(stream, contents, exc)
        except Exception as exc:   # truncation, CRC, lz4 or struct errors of a damaged file
            contents.damage = _where(stream, contents, exc)
    return contents


def _where(stream, contents: LogContents, exc: Exception) -> str:
    """'read N messages, up to byte B of S: why'."""
    size = Path(contents.path).stat().st_size
    last = (f', the last logged at {contents.messages[-1].log_time_ns} ns'
            if contents.messages else '')
    return (f'read {len(contents.messages)} messages up to byte {stream.tell()} of {size}'
            f'{last}; then {type(exc).__name__}: {exc or "end of data"}')


def decode(message: LogMessage, contents: LogContents):
    """A message's value: a ROS 2 message object (CDR, mcap_ros2's decoder) or a dict
    (JSON)."""
    if message.encoding == 'json':
        return json.loads(message.data)
    cache = contents.__dict__.setdefault('_decoders', {})
    if message.schema_name not in cache:
        from mcap.records import Schema
        from mcap_ros2.decoder import DecoderFactory
        encoding, data = contents.schemas[message.schema_name]
        schema = Schema(id=0, name=message.schema_name, encoding=encoding, data=data)
        cache[message.schema_name] = DecoderFactory().decoder_for(message.encoding, schema)
    if cache[message.schema_name] is None:
        raise ValueError(f'{message.topic}: no decoder for {message.encoding!r} messages')
    return cache[message.schema_name](message.data)
