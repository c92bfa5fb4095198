/*-------------------------------------------------------------------------
 *
 * shared_wal.c
 *	  The keys committed to shared filters, written to the WAL, and what a
 *	  recovery makes of them.
 *
 * A key enters a shared filter when its transaction commits
 * (shared_pending.c), and the filter lives in shared memory, saved to its
 * row every tlbf.snapshot_interval: a crash would forget the keys of the
 * last seconds.  So a transaction that stored keys writes them to the WAL
 * before its commit record (and before its PREPARE record), in one record
 * of tlbf's resource manager (RegisterCustomRmgr, with the ID
 * tlbf.wal_resource_manager); the commit record's flush makes them
 * durable with it.
 *
 * A recovery (after a crash, a point-in-time recovery, a standby's
 * promotion) replays the records from the last checkpoint's redo point:
 * the startup process collects their keys (tlbf_wal_redo) and, at the end
 * of recovery, keeps those whose transaction committed, by the commit log
 * as recovery left it (a transaction that did not commit by the recovery
 * target did not), and writes them as the keys of a committed transaction
 * to pg_tlbf/pending/ (shared_prepared.c): the next load of each filter
 * folds them in, and its next save makes the file unneeded.  Keys of
 * transactions still prepared are in their own files already.
 *
 * Nothing here may fail the startup process, which would stop the server:
 * a record that does not parse, or a file that cannot be written, is a
 * WARNING.
 *
 *-------------------------------------------------------------------------
 */
#include "shared_wal.h"
#include "filter_args.h"
#include "shared_images.h"
#include "shared_standby.h"
#include "shared_value.h"

#include "access/transam.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "access/xlog_internal.h"
#include "access/xloginsert.h"
#include "access/xlogreader.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"

/* 0: keys are not written to the WAL (set at server start) */
int			tlbf_wal_resource_manager = RM_EXPERIMENTAL_ID;

#define XLOG_TLBF_KEYS		0x10
#define XLOG_TLBF_IMAGE		0x20

/* the largest IMAGE record written (PostgreSQL refuses records past 1020MB) */
#define IMAGE_MAX_BYTES		(1000 * 1024 * 1024)

/*
 * A KEYS record: this header, then for each filter a group header, its
 * name (name_len bytes, no terminator) and its keys.  Nothing is aligned:
 * a reader copies each piece out.
 */
typedef struct WalKeysHeader
{
	uint64		fxid;			/* the top-level FullTransactionId */
	Oid			database;
	uint32		groups;
} WalKeysHeader;

typedef struct WalGroupHeader
{
	uint32		count;
	uint16		name_len;
} WalGroupHeader;

typedef struct WalKey
{
	uint64		a;
	uint64		b;
	TlbfTime	at;
} WalKey;

/*
 * An IMAGE record: this header, the name (name_len bytes), the filter
 * (bytes), then its pending keys (WalPendingKey each).  Unaligned too.
 */
typedef struct WalImageHeader
{
	Oid			database;
	TransactionId row_xid;		/* wrote the row the filter started from */
	uint64		region;
	uint64		bytes;
	uint32		pending;
	uint16		name_len;
} WalImageHeader;

typedef struct WalPendingKey
{
	TransactionId xid;			/* of the (sub)transaction that added it */
	WalKey		key;
} WalPendingKey;

static bool registered = false;

/* What the startup process collected, per filter. */
typedef struct RedoFilterId
{
	Oid			database;
	char		name[NAMEDATALEN];
} RedoFilterId;

typedef struct RedoKey
{
	uint64		fxid;
	WalKey		key;
} RedoKey;

typedef struct RedoFilter
{
	RedoFilterId id;			/* the hash key */
	RedoKey    *keys;
	Size		count;
	Size		room;
	char	   *image;			/* the last IMAGE's filter, or NULL */
	Size		image_bytes;
	TransactionId row_xid;
	Size		region;
} RedoFilter;

static MemoryContext redo_context = NULL;
static HTAB *redo_filters = NULL;

bool
tlbf_wal_enabled(void)
{
	return registered;
}

static int
by_name(const void *a, const void *b)
{
	return strcmp(((const PreparedKey *) a)->name, ((const PreparedKey *) b)->name);
}

/*
 * Write 'count' keys to the WAL, in one KEYS record of transaction 'fxid'
 * (grouped by filter name).
 */
static XLogRecPtr
log_keys(FullTransactionId fxid, const PreparedKey *keys, int count)
{
	PreparedKey *sorted;
	StringInfoData data;
	WalKeysHeader header;
	int			start;
	XLogRecPtr	end;

	if (!registered || count == 0)
		return InvalidXLogRecPtr;
	sorted = palloc(count * sizeof(PreparedKey));
	memcpy(sorted, keys, count * sizeof(PreparedKey));
	qsort(sorted, count, sizeof(PreparedKey), by_name);
	initStringInfo(&data);
	memset(&header, 0, sizeof(header));
	header.fxid = U64FromFullTransactionId(fxid);
	header.database = MyDatabaseId;
	appendBinaryStringInfo(&data, (const char *) &header, sizeof(header));
	for (start = 0; start < count;)
	{
		WalGroupHeader group;
		int			stop = start;

		while (stop < count && strcmp(sorted[stop].name, sorted[start].name) == 0)
			stop++;
		memset(&group, 0, sizeof(group));	/* no padding of ours in the WAL */
		group.count = stop - start;
		group.name_len = strlen(sorted[start].name);
		appendBinaryStringInfo(&data, (const char *) &group, sizeof(group));
		appendBinaryStringInfo(&data, sorted[start].name, group.name_len);
		for (int i = start; i < stop; i++)
		{
			WalKey		key = {sorted[i].a, sorted[i].b, sorted[i].at};

			appendBinaryStringInfo(&data, (const char *) &key, sizeof(key));
		}
		((WalKeysHeader *) data.data)->groups++;
		start = stop;
	}
	XLogBeginInsert();
	XLogRegisterData(data.data, data.len);
	end = XLogInsert((RmgrId) tlbf_wal_resource_manager, XLOG_TLBF_KEYS);
	pfree(data.data);
	pfree(sorted);
	return end;
}

/* The keys this transaction stored, before its commit (or PREPARE) record. */
void
tlbf_wal_log_keys(const PreparedKey *keys, int count)
{
	if (count > 0)
		(void) log_keys(GetTopFullTransactionId(), keys, count);
}

/*
 * Keys added to filter 'name' at once, whatever becomes of the transaction
 * (tlbf_shared_rebuild): a KEYS record of the frozen XID, which a recovery
 * takes as committed.  No commit record may flush it (the transaction may
 * have no XID): the caller flushes up to the end returned
 * (tlbf_wal_flush), once it has let go of the filter.
 */
XLogRecPtr
tlbf_wal_log_added(const char *name, const TlbfHash *hashes, const TlbfTime *times, int n)
{
	PreparedKey *keys;
	XLogRecPtr	end;

	if (!registered || n == 0)
		return InvalidXLogRecPtr;
	keys = palloc0(n * sizeof(PreparedKey));
	for (int i = 0; i < n; i++)
	{
		strlcpy(keys[i].name, name, NAMEDATALEN);
		keys[i].a = hashes[i].a;
		keys[i].b = hashes[i].b;
		keys[i].at = times[i];
	}
	end = log_keys(FullTransactionIdFromEpochAndXid(0, FrozenTransactionId), keys, n);
	pfree(keys);
	return end;
}

/* Make the WAL durable up to 'end' (nothing if it is invalid). */
void
tlbf_wal_flush(XLogRecPtr end)
{
	if (!XLogRecPtrIsInvalid(end))
		XLogFlush(end);
}

/*
 * Write an image of a shared filter to the WAL: its bytes, the XID of the
 * row it started from, its region, and the keys pending for it (of every
 * transaction not known rolled back: one that commits after the image is
 * in none of the records a recovery from a later redo point replays but
 * this one).  The launcher writes one of each filter whose state is not
 * in its row after each checkpoint's redo point (launcher_checkpoints.c),
 * holding the filter, so that the image and the keys records that follow
 * it in the WAL are all a recovery needs.
 */
void
tlbf_wal_log_image(Oid database, const char *name, TransactionId row_xid, Size region,
				   const Tlbf *filter, const PendingListed *pending, int npending)
{
	WalImageHeader header;
	StringInfoData head;
	StringInfoData keys;

	if (!registered)
		return;
	memset(&header, 0, sizeof(header));
	header.database = database;
	header.row_xid = row_xid;
	header.region = region;
	header.bytes = shared_value_size(filter);
	header.pending = npending;
	header.name_len = strlen(name);
	initStringInfo(&head);
	appendBinaryStringInfo(&head, (const char *) &header, sizeof(header));
	appendBinaryStringInfo(&head, name, header.name_len);
	initStringInfo(&keys);
	for (int i = 0; i < npending; i++)
	{
		WalPendingKey k;

		memset(&k, 0, sizeof(k));
		k.xid = pending[i].xid;
		k.key.a = pending[i].hash.a;
		k.key.b = pending[i].hash.b;
		k.key.at = pending[i].at;
		appendBinaryStringInfo(&keys, (const char *) &k, sizeof(k));
	}
	/* PostgreSQL takes no record past 1020MB (a filter of a 1GB region) */
	if (head.len + header.bytes + keys.len > IMAGE_MAX_BYTES)
	{
		ereport(WARNING,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("shared tlbf filter \"%s\" is too large for an image in the WAL", name),
				 errdetail("A crash before its next save would forget the keys added since its last one."),
				 errhint("Keep shared filters below %d MB.", IMAGE_MAX_BYTES / (1024 * 1024))));
		pfree(head.data);
		pfree(keys.data);
		return;
	}
	XLogBeginInsert();
	XLogRegisterData((char *) head.data, head.len);
	XLogRegisterData((char *) filter, header.bytes);
	if (keys.len > 0)
		XLogRegisterData((char *) keys.data, keys.len);
	(void) XLogInsert((RmgrId) tlbf_wal_resource_manager, XLOG_TLBF_IMAGE);
	pfree(head.data);
	pfree(keys.data);
}

/* The FullTransactionId of a recent XID (of a record being replayed). */
static uint64
full_xid(TransactionId xid)
{
	FullTransactionId next = ReadNextFullTransactionId();
	uint32		epoch = EpochFromFullTransactionId(next);

	if (xid >= XidFromFullTransactionId(next) && epoch > 0)
		epoch--;
	return U64FromFullTransactionId(FullTransactionIdFromEpochAndXid(epoch, xid));
}

/*
 * Walk a KEYS record: 'each' is called for every group (with its keys
 * unaligned in 'keys').  False if the record does not parse.
 */
typedef void (*GroupFn) (const WalKeysHeader *header, const char *name,
						 const char *keys, uint32 count, void *arg);

static bool
walk_keys(const char *data, Size len, GroupFn each, void *arg)
{
	WalKeysHeader header;
	Size		off = sizeof(header);

	if (len < sizeof(header))
		return false;
	memcpy(&header, data, sizeof(header));
	for (uint32 g = 0; g < header.groups; g++)
	{
		WalGroupHeader group;
		char		name[NAMEDATALEN];

		if (len - off < sizeof(group))
			return false;
		memcpy(&group, data + off, sizeof(group));
		off += sizeof(group);
		if (group.name_len == 0 || group.name_len >= NAMEDATALEN || len - off < group.name_len)
			return false;
		memcpy(name, data + off, group.name_len);
		name[group.name_len] = '\0';
		off += group.name_len;
		if ((len - off) / sizeof(WalKey) < group.count)
			return false;
		if (each != NULL)
			each(&header, name, data + off, group.count, arg);
		off += (Size) group.count * sizeof(WalKey);
	}
	return off == len;
}

static void
start_redo(void)
{
	HASHCTL		info;

	if (redo_filters != NULL)
		return;
	redo_context = AllocSetContextCreate(TopMemoryContext, "tlbf redo",
										 ALLOCSET_DEFAULT_SIZES);
	info.keysize = sizeof(RedoFilterId);
	info.entrysize = sizeof(RedoFilter);
	info.hcxt = redo_context;
	redo_filters = hash_create("tlbf redo filters", 64, &info,
							   HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
}

static RedoFilter *
redo_filter(Oid database, const char *name)
{
	RedoFilterId id;
	RedoFilter *filter;
	bool		found;

	memset(&id, 0, sizeof(id));	/* hashed as bytes */
	id.database = database;
	strlcpy(id.name, name, NAMEDATALEN);
	filter = hash_search(redo_filters, &id, HASH_ENTER, &found);
	if (!found)
	{
		filter->keys = NULL;
		filter->count = 0;
		filter->room = 0;
		filter->image = NULL;
		filter->image_bytes = 0;
	}
	return filter;
}

/*
 * An allocation of the startup process that may fail: an ERROR there
 * would stop the server, so the caller warns and does without.
 */
static void *
alloc_or_null(Size size)
{
	return MemoryContextAllocExtended(redo_context, size, MCXT_ALLOC_HUGE | MCXT_ALLOC_NO_OOM);
}

static void
report_no_memory(const char *name, const char *what)
{
	ereport(WARNING,
			(errcode(ERRCODE_OUT_OF_MEMORY),
			 errmsg("tlbf: out of memory for the %s of shared filter \"%s\" in the WAL", what, name),
			 errdetail("They are ignored: the filter may miss keys after this recovery."),
			 errhint("Refill the filter with tlbf_shared_rebuild.")));
}

/* Room for 'count' more keys; false if there is no memory for them. */
static bool
make_room(RedoFilter *filter, Size count)
{
	if (filter->room - filter->count < count)
	{
		Size		room = Max(Max(filter->room * 2, filter->count + count), 64);
		RedoKey    *keys = alloc_or_null(room * sizeof(RedoKey));

		if (keys == NULL)
		{
			report_no_memory(filter->id.name, "keys");
			return false;
		}
		if (filter->keys != NULL)
		{
			memcpy(keys, filter->keys, filter->count * sizeof(RedoKey));
			pfree(filter->keys);
		}
		filter->keys = keys;
		filter->room = room;
	}
	return true;
}

static void
collect_group(const WalKeysHeader *header, const char *name, const char *keys,
			  uint32 count, void *arg)
{
	RedoFilter *filter = redo_filter(header->database, name);

	if (!make_room(filter, count))
		return;
	for (uint32 i = 0; i < count; i++)
	{
		RedoKey    *k = &filter->keys[filter->count++];

		k->fxid = header->fxid;
		memcpy(&k->key, keys + (Size) i * sizeof(WalKey), sizeof(WalKey));
		/* for a hot standby's readers */
		tlbf_standby_add(header->database, name,
						 XidFromFullTransactionId(FullTransactionIdFromU64(header->fxid)),
						 k->key.a, k->key.b, k->key.at);
	}
}

/*
 * Parse an IMAGE record: false if it does not.  *name is palloc'd, the
 * filter and the keys point into 'data'.
 */
static bool
parse_image(const char *data, Size len, WalImageHeader *header, char **name,
			const char **filter, const char **keys)
{
	Size		off = sizeof(*header);

	if (len < sizeof(*header))
		return false;
	memcpy(header, data, sizeof(*header));
	if (header->name_len == 0 || header->name_len >= NAMEDATALEN ||
		len - off < header->name_len)
		return false;
	*name = palloc0(NAMEDATALEN);
	memcpy(*name, data + off, header->name_len);
	off += header->name_len;
	if (len - off < header->bytes || header->bytes < 1)
		return false;
	*filter = data + off;
	off += header->bytes;
	if ((len - off) / sizeof(WalPendingKey) != header->pending ||
		(len - off) % sizeof(WalPendingKey) != 0)
		return false;
	*keys = data + off;
	return true;
}

/* An IMAGE: the filter and its pending keys replace what came before. */
static bool
collect_image(const char *data, Size len)
{
	WalImageHeader header;
	char	   *name;
	const char *bytes;
	const char *keys;
	RedoFilter *filter;

	if (!parse_image(data, len, &header, &name, &bytes, &keys))
		return false;
	filter = redo_filter(header.database, name);
	if (filter->image != NULL)
		pfree(filter->image);
	filter->image = alloc_or_null(header.bytes);
	if (filter->image == NULL)
	{
		/* the keys before it stay: its row and they may be enough */
		report_no_memory(name, "image");
		pfree(name);
		return true;
	}
	memcpy(filter->image, bytes, header.bytes);
	filter->image_bytes = header.bytes;
	filter->row_xid = header.row_xid;
	filter->region = header.region;
	/*
	 * Every key of a record before the image was in the filter when the
	 * image was taken, in its bits or pending (a KEYS record is written
	 * after its keys entered the table, an IMAGE under the filter's lock):
	 * the image's own pending keys replace them, so that a standby's
	 * memory holds the keys of one checkpoint interval, not of its life.
	 */
	filter->count = 0;
	if (!make_room(filter, header.pending))
	{
		pfree(name);
		return true;
	}
	for (uint32 i = 0; i < header.pending; i++)
	{
		WalPendingKey k;
		RedoKey    *r = &filter->keys[filter->count++];

		memcpy(&k, keys + (Size) i * sizeof(k), sizeof(k));
		r->fxid = full_xid(k.xid);
		r->key = k.key;
		tlbf_standby_add(header.database, name, k.xid, k.key.a, k.key.b, k.key.at);
	}
	pfree(name);
	return true;
}

static void
tlbf_wal_redo(XLogReaderState *record)
{
	uint8		info = XLogRecGetInfo(record) & ~XLR_INFO_MASK;

	if (info == XLOG_TLBF_IMAGE)
	{
		start_redo();
		if (!collect_image(XLogRecGetData(record), XLogRecGetDataLen(record)))
			ereport(WARNING,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("tlbf: WAL record at %X/%X does not parse, its image is ignored",
							LSN_FORMAT_ARGS(record->ReadRecPtr))));
		return;
	}
	if (info != XLOG_TLBF_KEYS)
	{
		ereport(WARNING,
				(errmsg("tlbf: WAL record of unknown kind %u at %X/%X ignored", info,
						LSN_FORMAT_ARGS(record->ReadRecPtr))));
		return;
	}
	start_redo();
	/* the whole record checked before any key of it is taken */
	if (!walk_keys(XLogRecGetData(record), XLogRecGetDataLen(record), NULL, NULL))
	{
		ereport(WARNING,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("tlbf: WAL record at %X/%X does not parse, its keys are ignored",
						LSN_FORMAT_ARGS(record->ReadRecPtr))));
		return;
	}
	(void) walk_keys(XLogRecGetData(record), XLogRecGetDataLen(record), collect_group, NULL);
}

static void
tlbf_wal_startup(void)
{
	start_redo();
}

/*
 * Write one database's committed keys, in files of at most FILE_KEYS keys
 * (more when one transaction has more), each named by the last of its
 * transactions: a file must be readable in one allocation.
 */
#define FILE_KEYS	(1024 * 1024)

typedef struct OutKey
{
	uint64		fxid;
	PreparedKey key;
} OutKey;

static int
out_by_fxid(const void *a, const void *b)
{
	uint64		x = ((const OutKey *) a)->fxid;
	uint64		y = ((const OutKey *) b)->fxid;

	return x < y ? -1 : x > y ? 1 : 0;
}

static void
write_database(Oid database, OutKey *out, Size count)
{
	PreparedKey *chunk = palloc_extended(Min(count, (Size) FILE_KEYS) * sizeof(PreparedKey),
										 MCXT_ALLOC_HUGE);
	Size		room = Min(count, (Size) FILE_KEYS);
	Size		start = 0;

	qsort(out, count, sizeof(OutKey), out_by_fxid);
	while (start < count)
	{
		Size		end = start;
		Size		n = 0;

		while (end < count && (end - start < FILE_KEYS || out[end].fxid == out[end - 1].fxid))
		{
			if (n == room)
			{
				room *= 2;
				chunk = repalloc_huge(chunk, room * sizeof(PreparedKey));
			}
			chunk[n++] = out[end].key;
			end++;
		}
		tlbf_prepared_write_recovered(database, FullTransactionIdFromU64(out[end - 1].fxid),
									  chunk, (int) n);
		start = end;
	}
	pfree(chunk);
}

/*
 * Does the last image of 'filter' hold the filter its header describes,
 * and no more?  Its directory is read only once it is known to lie
 * within the bytes (a filter's own length, from its last slice, would read
 * past a record that lies); the load checks the rest (shared_value_validate).
 */
static bool
image_fits(const RedoFilter *filter)
{
	const Tlbf *f = (const Tlbf *) filter->image;

	return f != NULL && shared_value_plausible(f, filter->image_bytes);
}

/*
 * The end of recovery: keep the keys of committed transactions, and write
 * them, per database, for the filters' next loads.
 */
static void
write_recovered(void)
{
	HASH_SEQ_STATUS seq;
	RedoFilter *filter;
	List	   *databases = NIL;
	ListCell   *cell;

	hash_seq_init(&seq, redo_filters);
	while ((filter = hash_seq_search(&seq)) != NULL)
	{
		databases = list_append_unique_oid(databases, filter->id.database);
		if (image_fits(filter))
		{
			/* the length word as a copy of a varlena has it */
			shared_value_set_length((Tlbf *) filter->image);
			(void) tlbf_image_write(filter->id.database, filter->id.name, filter->row_xid,
									filter->region, (const Tlbf *) filter->image);
		}
	}
	foreach(cell, databases)
	{
		Oid			database = lfirst_oid(cell);
		OutKey	   *out = NULL;
		Size		count = 0;
		Size		room = 0;

		hash_seq_init(&seq, redo_filters);
		while ((filter = hash_seq_search(&seq)) != NULL)
		{
			if (filter->id.database != database)
				continue;
			for (Size i = 0; i < filter->count; i++)
			{
				RedoKey    *k = &filter->keys[i];

				if (!TransactionIdDidCommit(XidFromFullTransactionId(FullTransactionIdFromU64(k->fxid))))
					continue;
				if (count == room)
				{
					room = Max(room * 2, 1024);
					out = out == NULL ? palloc_extended(room * sizeof(OutKey), MCXT_ALLOC_HUGE) :
						repalloc_huge(out, room * sizeof(OutKey));
				}
				out[count].fxid = k->fxid;
				memset(&out[count].key, 0, sizeof(PreparedKey));
				strlcpy(out[count].key.name, filter->id.name, NAMEDATALEN);
				out[count].key.a = k->key.a;
				out[count].key.b = k->key.b;
				out[count].key.at = k->key.at;
				count++;
			}
		}
		if (count > 0)
		{
			write_database(database, out, count);
			ereport(LOG,
					(errmsg("tlbf: recovery found %zu keys of committed transactions for shared filters of database %u",
							count, database)));
		}
		if (out != NULL)
			pfree(out);
	}
}

static void
tlbf_wal_cleanup(void)
{
	MemoryContext old;

	if (redo_filters == NULL)
		return;
	old = MemoryContextSwitchTo(redo_context);
	/* an ERROR here would stop the server: the keys are lost, said so */
	PG_TRY();
	{
		write_recovered();
	}
	PG_CATCH();
	{
		ErrorData  *error;

		MemoryContextSwitchTo(redo_context);
		error = CopyErrorData();
		FlushErrorState();
		ereport(WARNING,
				(errmsg("tlbf: the keys recovered from the WAL for shared filters could not be written: %s",
						error->message),
				 errhint("Refill the shared filters with tlbf_shared_rebuild.")));
	}
	PG_END_TRY();
	MemoryContextSwitchTo(old);
	MemoryContextDelete(redo_context);
	redo_context = NULL;
	redo_filters = NULL;
}

static void
count_group(const WalKeysHeader *header, const char *name, const char *keys,
			uint32 count, void *arg)
{
	StringInfo	buf = arg;

	appendStringInfo(buf, "; \"%s\": %u keys", name, count);
}

static void
tlbf_wal_desc(StringInfo buf, XLogReaderState *record)
{
	const char *data = XLogRecGetData(record);
	Size		len = XLogRecGetDataLen(record);
	WalKeysHeader header;

	if ((XLogRecGetInfo(record) & ~XLR_INFO_MASK) == XLOG_TLBF_IMAGE)
	{
		WalImageHeader image;
		char	   *name;
		const char *bytes;
		const char *keys;

		if (!parse_image(data, len, &image, &name, &bytes, &keys))
			appendStringInfoString(buf, "(does not parse)");
		else
			appendStringInfo(buf, "database %u, \"%s\": " UINT64_FORMAT " bytes, %u keys pending",
							 image.database, name, image.bytes, image.pending);
		return;
	}

	if (len < sizeof(header))
	{
		appendStringInfoString(buf, "(short)");
		return;
	}
	memcpy(&header, data, sizeof(header));
	appendStringInfo(buf, "database %u, transaction " UINT64_FORMAT, header.database, header.fxid);
	if (!walk_keys(data, len, count_group, buf))
		appendStringInfoString(buf, " (does not parse)");
}

static const char *
tlbf_wal_identify(uint8 info)
{
	switch (info & ~XLR_INFO_MASK)
	{
		case XLOG_TLBF_KEYS:
			return "KEYS";
		case XLOG_TLBF_IMAGE:
			return "IMAGE";
	}
	return NULL;
}

static RmgrData tlbf_rmgr = {
	.rm_name = "tlbf",
	.rm_redo = tlbf_wal_redo,
	.rm_desc = tlbf_wal_desc,
	.rm_identify = tlbf_wal_identify,
	.rm_startup = tlbf_wal_startup,
	.rm_cleanup = tlbf_wal_cleanup,
};

/* Register the resource manager (from _PG_init, when preloaded). */
void
tlbf_wal_init(void)
{
	if (tlbf_wal_resource_manager == 0)
		return;
	RegisterCustomRmgr((RmgrId) tlbf_wal_resource_manager, &tlbf_rmgr);
	registered = true;
}
