/*-------------------------------------------------------------------------
 *
 * shared_prepared.c
 *	  The keys of prepared transactions, written down so that a crash does
 *	  not forget them.
 *
 * A key a transaction adds to a shared filter waits in shared memory until
 * the transaction commits (shared_pending.c).  A prepared transaction
 * outlives a crash, and shared memory does not: so, before its PREPARE
 * record, it writes the keys its rows stored to pg_tlbf/pending/
 * <database>_<xid> (tlbf_prepared_write).  When a filter is loaded after a
 * restart, they are read back (tlbf_prepared_read), to wait again if the
 * transaction is still prepared, or to go into the filter if it committed.
 * A save removes the files no longer needed, and the launcher
 * those of databases dropped.
 *
 * Every file is read as hostile: its size, its header, its CRC and the XID
 * of its name are checked, and one that fails is set aside (.damaged) with
 * a WARNING, never read again.  A transaction PostgreSQL no longer knows
 * the fate of is taken as committed: a false positive at worst, never a
 * repeat let through.
 *
 *-------------------------------------------------------------------------
 */
#include "shared_prepared.h"

#include <sys/stat.h>
#include <unistd.h>

#include "access/transam.h"
#include "access/twophase.h"
#include "access/xact.h"
#include "miscadmin.h"
#include "port/pg_crc32c.h"
#include "storage/fd.h"
#include "storage/lwlock.h"
#include "storage/procarray.h"
#include "utils/memutils.h"

/* What became of the transaction of a file. */
typedef enum PreparedFate
{
	PREPARED_MINE = 1,
	PREPARED_OPEN,				/* still prepared (or being prepared) */
	PREPARED_COMMITTED,
	PREPARED_ROLLED_BACK
} PreparedFate;

/*
 * A prepared transaction's keys, as written to pg_tlbf/pending/: a header,
 * then the keys, with a CRC of both (a torn or damaged file is not read).
 */
#define PREPARED_DIR		"pg_tlbf/pending"
#define PREPARED_MAGIC		0x51424C54u /* "TLBQ" */
#define PREPARED_VERSION	2

typedef struct PreparedHeader
{
	uint32		magic;
	uint32		version;
	uint64		xid;			/* the transaction's FullTransactionId */
	uint32		count;			/* keys after the header */
	pg_crc32c	crc;			/* of the header (crc 0) and the keys */
} PreparedHeader;

/* pg_tlbf/pending/<database>_<xid>: a prepared transaction's keys there. */
static char *
prepared_path(Oid database, TransactionId xid)
{
	return psprintf(PREPARED_DIR "/%u_%u", database, xid);
}

static void
make_prepared_dir(void)
{
	if (MakePGDirectory("pg_tlbf") < 0 && errno != EEXIST)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not create directory \"pg_tlbf\": %m")));
	if (MakePGDirectory(PREPARED_DIR) < 0 && errno != EEXIST)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not create directory \"%s\": %m", PREPARED_DIR)));
}

static pg_crc32c
prepared_crc(const PreparedHeader *header, const void *keys, Size bytes)
{
	PreparedHeader h = *header;
	pg_crc32c	crc;

	h.crc = 0;
	INIT_CRC32C(crc);
	COMP_CRC32C(crc, &h, sizeof(h));
	COMP_CRC32C(crc, keys, bytes);
	FIN_CRC32C(crc);
	return crc;
}

/*
 * Write 'count' keys of transaction 'fxid' to pg_tlbf/pending/<database>_<xid>,
 * durably (ERROR if it cannot).
 */
static void
write_keys_file(Oid database, FullTransactionId fxid, const PreparedKey *keys, int count)
{
	PreparedHeader header;
	Size		bytes = (Size) count * sizeof(PreparedKey);
	char	   *path;
	char	   *temporary;
	int			fd;

	memset(&header, 0, sizeof(header));
	header.magic = PREPARED_MAGIC;
	header.version = PREPARED_VERSION;
	header.xid = U64FromFullTransactionId(fxid);
	header.count = count;
	header.crc = prepared_crc(&header, keys, bytes);
	make_prepared_dir();
	path = prepared_path(database, XidFromFullTransactionId(fxid));
	temporary = psprintf("%s.tmp", path);
	fd = OpenTransientFile(temporary, O_CREAT | O_TRUNC | O_WRONLY | PG_BINARY);
	if (fd < 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not create file \"%s\": %m", temporary)));
	if (write(fd, &header, sizeof(header)) != sizeof(header) ||
		write(fd, keys, bytes) != (ssize_t) bytes || pg_fsync(fd) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not write file \"%s\": %m", temporary)));
	CloseTransientFile(fd);
	durable_rename(temporary, path, ERROR);
	pfree(temporary);
	pfree(path);
}

/*
 * Write the 'count' keys a transaction being prepared stored to
 * pg_tlbf/pending/, durably, before its PREPARE record (ERROR if it
 * cannot: the PREPARE fails).
 */
void
tlbf_prepared_write(const PreparedKey *keys, int count)
{
	write_keys_file(MyDatabaseId, GetTopFullTransactionId(), keys, count);
}

typedef enum PreparedRead
{
	PREPARED_READ,
	PREPARED_MISSING,			/* gone (removed meanwhile) */
	PREPARED_UNREADABLE,		/* an error reading it: try again later */
	PREPARED_DAMAGED			/* not a file of ours, torn, or damaged */
} PreparedRead;

/*
 * Read the keys of a prepared transaction's file, checked: its header, its
 * size, its CRC, the XID of its name.  *keys is palloc'd.
 */
static PreparedRead
read_prepared_keys(const char *path, TransactionId xid, PreparedHeader *header,
				   PreparedKey **keys)
{
	int			fd = OpenTransientFile(path, O_RDONLY | PG_BINARY);
	struct stat st;
	Size		bytes;
	PreparedRead result = PREPARED_DAMAGED;
	ssize_t		got;
	int			save_errno;

	*keys = NULL;
	if (fd < 0)
		return errno == ENOENT ? PREPARED_MISSING : PREPARED_UNREADABLE;
	if (fstat(fd, &st) != 0)
		result = PREPARED_UNREADABLE;
	else if ((got = read(fd, header, sizeof(*header))) != sizeof(*header))
		result = got < 0 ? PREPARED_UNREADABLE : PREPARED_DAMAGED;
	else if (header->magic == PREPARED_MAGIC && header->version == PREPARED_VERSION &&
			 XidFromFullTransactionId(FullTransactionIdFromU64(header->xid)) == xid &&
			 header->count <= MaxAllocSize / sizeof(PreparedKey) &&
			 st.st_size == (off_t) (sizeof(*header) + (Size) header->count * sizeof(PreparedKey)))
	{
		bytes = (Size) header->count * sizeof(PreparedKey);
		*keys = palloc(Max(bytes, 1));
		got = read(fd, *keys, bytes);
		if (got < 0)
			result = PREPARED_UNREADABLE;
		else if ((Size) got == bytes && prepared_crc(header, *keys, bytes) == header->crc)
			result = PREPARED_READ;
	}
	save_errno = errno;			/* for the caller's %m */
	CloseTransientFile(fd);
	errno = save_errno;
	if (result != PREPARED_READ && *keys != NULL)
	{
		pfree(*keys);
		*keys = NULL;
	}
	for (uint32 i = 0; result == PREPARED_READ && i < header->count; i++)
		(*keys)[i].name[NAMEDATALEN - 1] = '\0';
	return result;
}

/*
 * A recovery found 'count' keys of committed transactions in the WAL
 * (shared_wal.c): they are written as the keys of one of them, 'fxid'
 * (committed, so they go into their filters at the next load, and the
 * file goes once those are saved), with those of a file of that name
 * already there (a prepared transaction's, or an earlier recovery's).
 */
void
tlbf_prepared_write_recovered(Oid database, FullTransactionId fxid, const PreparedKey *keys,
							  int count)
{
	char	   *path = prepared_path(database, XidFromFullTransactionId(fxid));
	PreparedHeader header;
	PreparedKey *before;
	PreparedKey *all;

	if (read_prepared_keys(path, XidFromFullTransactionId(fxid), &header, &before) != PREPARED_READ)
	{
		write_keys_file(database, fxid, keys, count);
		pfree(path);
		return;
	}
	all = palloc_extended(((Size) count + header.count) * sizeof(PreparedKey),
						  MCXT_ALLOC_HUGE);
	memcpy(all, before, (Size) header.count * sizeof(PreparedKey));
	memcpy(all + header.count, keys, (Size) count * sizeof(PreparedKey));
	write_keys_file(database, fxid, all, count + header.count);
	pfree(all);
	pfree(before);
	pfree(path);
}

/*
 * A file pg_tlbf/pending/<database>_<xid>[.tmp]: its database and XID, and
 * whether it is a file being written (.tmp).  False if not such a name.
 */
static bool
prepared_file(const char *file, Oid *database, TransactionId *xid, bool *temporary)
{
	unsigned int db;
	unsigned int x;
	int			end = -1;

	if (sscanf(file, "%u_%u%n", &db, &x, &end) != 2 || end < 0)
		return false;
	*temporary = strcmp(file + end, ".tmp") == 0;
	if (file[end] != '\0' && !*temporary)
		return false;
	*database = db;
	*xid = x;
	return TransactionIdIsValid(*xid);
}

/*
 * What became of prepared transaction 'fxid' of a file.  One whose fate
 * PostgreSQL no longer keeps (it ended before the commit log's oldest
 * page, or before a wraparound) is taken as committed: its keys stay, a
 * false positive at worst, never a row let through twice.
 */
static PreparedFate
prepared_fate(FullTransactionId fxid)
{
	TransactionId xid = XidFromFullTransactionId(fxid);
	FullTransactionId next = ReadNextFullTransactionId();
	PreparedFate		fate;

	if (!FullTransactionIdPrecedes(fxid, next) ||
		U64FromFullTransactionId(next) - U64FromFullTransactionId(fxid) >= (UINT64CONST(1) << 31))
		return PREPARED_COMMITTED;
	if (TransactionIdIsCurrentTransactionId(xid))
		return PREPARED_MINE;
	if (TransactionIdIsInProgress(xid))
		return PREPARED_OPEN;
	/* as pg_xact_status does: the log is not truncated while we look */
	LWLockAcquire(XactTruncationLock, LW_SHARED);
	if (TransactionIdPrecedes(xid, TLBF_OLDEST_CLOG_XID()))
		fate = PREPARED_COMMITTED;
	else
		fate = TransactionIdDidCommit(xid) ? PREPARED_COMMITTED : PREPARED_ROLLED_BACK;
	LWLockRelease(XactTruncationLock);
	return fate;
}

/*
 * May transaction 'xid' of a file name still be running (or prepared)?
 * One that looks ahead of the next XID is from before a wraparound: no.
 */
static bool
may_be_running(TransactionId xid)
{
	return TransactionIdPrecedes(xid, ReadNextTransactionId()) && TransactionIdIsInProgress(xid);
}

static void
report_damaged(const char *path)
{
	ereport(WARNING,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("tlbf: the keys a prepared transaction wrote to file \"%s\" are damaged", path),
			 errdetail("The file is renamed \"%s.damaged\" and its keys ignored.", path)));
}

/* Set a damaged file aside, so that it is neither read nor removed again. */
static void
set_aside(const char *path)
{
	char	   *damaged = psprintf("%s.damaged", path);

	report_damaged(path);
	(void) durable_rename(path, damaged, WARNING);
	pfree(damaged);
}

/*
 * Filter 'name' of this database is about to be loaded (after a restart):
 * the keys that prepared transactions wrote down for it, with their
 * transactions' fates, or NULL if there are none.  Read before the filter
 * is installed, so that an error here leaves it not loaded, to be loaded
 * again by its next use (ERROR if a file cannot be read now; a damaged one
 * is set aside with a WARNING).
 */
PreparedKeys *
tlbf_prepared_read(const char *name)
{
	DIR		   *dir = AllocateDir(PREPARED_DIR);
	struct dirent *entry;
	PreparedKeys *found = NULL;
	int			room = 0;

	if (dir == NULL)
		return NULL;			/* none was ever prepared */
	while ((entry = ReadDir(dir, PREPARED_DIR)) != NULL)
	{
		Oid			database;
		TransactionId xid;
		bool		temporary;
		char	   *path;
		PreparedHeader header;
		PreparedKey *keys;
		PreparedFate fate;

		if (!prepared_file(entry->d_name, &database, &xid, &temporary) ||
			database != MyDatabaseId || temporary)
			continue;
		path = psprintf(PREPARED_DIR "/%s", entry->d_name);
		switch (read_prepared_keys(path, xid, &header, &keys))
		{
			case PREPARED_READ:
				break;
			case PREPARED_MISSING:
				continue;
			case PREPARED_UNREADABLE:
				ereport(ERROR,
						(errcode_for_file_access(),
						 errmsg("could not read file \"%s\": %m", path)));
				break;
			case PREPARED_DAMAGED:
				set_aside(path);
				continue;
		}
		fate = prepared_fate(FullTransactionIdFromU64(header.xid));
		for (uint32 i = 0; i < header.count && (fate == PREPARED_COMMITTED || fate == PREPARED_OPEN); i++)
		{
			RestoredKey *k;

			if (strcmp(keys[i].name, name) != 0)
				continue;
			if (found == NULL)
			{
				room = 16;
				found = palloc(offsetof(PreparedKeys, keys) + room * sizeof(RestoredKey));
				found->count = 0;
			}
			else if (found->count == room)
			{
				room *= 2;
				found = repalloc(found, offsetof(PreparedKeys, keys) + room * sizeof(RestoredKey));
			}
			k = &found->keys[found->count++];
			k->hash.a = keys[i].a;
			k->hash.b = keys[i].b;
			k->at = keys[i].at;
			k->xid = xid;
			k->committed = fate == PREPARED_COMMITTED;
		}
		pfree(keys);
		pfree(path);
	}
	FreeDir(dir);
	return found;
}

/*
 * Is the file of keys 'path' (of transaction 'xid') no longer needed?  A
 * half-written one (.tmp) once its transaction ended (before its PREPARE
 * record: never prepared); one of a transaction that rolled back; one of
 * a transaction that committed once every filter it names is 'settled'.
 * A file that cannot be read now is kept for the next time; a damaged one
 * is set aside.
 */
static bool
file_done(const char *path, TransactionId xid, bool temporary,
		  bool (*settled) (const char *name))
{
	PreparedHeader header;
	PreparedKey *keys;
	bool		done = true;

	if (temporary)
		return !may_be_running(xid);
	switch (read_prepared_keys(path, xid, &header, &keys))
	{
		case PREPARED_READ:
			break;
		case PREPARED_DAMAGED:
			set_aside(path);
			return false;
		case PREPARED_MISSING:
		case PREPARED_UNREADABLE:
			return false;
	}
	switch (prepared_fate(FullTransactionIdFromU64(header.xid)))
	{
		case PREPARED_MINE:
		case PREPARED_OPEN:
			done = false;
			break;
		case PREPARED_COMMITTED:
			for (uint32 i = 0; i < header.count && done; i++)
				done = settled(keys[i].name);
			break;
		case PREPARED_ROLLED_BACK:
			break;
	}
	pfree(keys);
	return done;
}

/* What decides whether a file of keys is no longer needed. */
typedef bool (*FileDone) (const char *path, Oid database, TransactionId xid, bool temporary,
						  const void *arg);

/* Remove the files of keys in pg_tlbf/pending/ that 'done' says are not needed. */
static void
remove_files(FileDone done, const void *arg)
{
	DIR		   *dir = AllocateDir(PREPARED_DIR);
	struct dirent *entry;

	if (dir == NULL)
		return;
	while ((entry = ReadDir(dir, PREPARED_DIR)) != NULL)
	{
		Oid			database;
		TransactionId xid;
		bool		temporary;
		char	   *path;

		if (!prepared_file(entry->d_name, &database, &xid, &temporary))
			continue;
		path = psprintf(PREPARED_DIR "/%s", entry->d_name);
		if (done(path, database, xid, temporary, arg))
			durable_unlink(path, WARNING);
		pfree(path);
	}
	FreeDir(dir);
}

typedef struct Settled
{
	bool		(*settled) (const char *name);
} Settled;

static bool
done_here(const char *path, Oid database, TransactionId xid, bool temporary, const void *arg)
{
	return database == MyDatabaseId &&
		file_done(path, xid, temporary, ((const Settled *) arg)->settled);
}

/*
 * Remove the files of keys of this database that are no longer needed
 * (file_done; 'settled': a filter loaded, with its keys folded and saved
 * since, or gone).  A save calls this first.
 */
void
tlbf_prepared_clean(bool (*settled) (const char *name))
{
	Settled		here = {settled};

	remove_files(done_here, &here);
}

typedef struct Databases
{
	const List *existing;
	TransactionId next_xid;
} Databases;

static bool
database_gone(const char *path, Oid database, TransactionId xid, bool temporary, const void *arg)
{
	const Databases *databases = arg;

	return !list_member_oid(databases->existing, database) &&
		TransactionIdPrecedes(xid, databases->next_xid) && !TransactionIdIsInProgress(xid);
}

/*
 * Remove the files of databases that no longer exist (the launcher calls
 * this): those of a database not in 'existing', a list read when the next
 * XID was 'next_xid' (a database created since has no transaction before
 * it), whose transaction has ended (DROP DATABASE waits for none, but
 * refuses while one is prepared).
 */
void
tlbf_prepared_clean_databases(const List *existing, TransactionId next_xid)
{
	Databases	databases = {existing, next_xid};

	remove_files(database_gone, &databases);
}
