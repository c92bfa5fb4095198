/*-------------------------------------------------------------------------
 *
 * shared_images.c
 *	  Images of shared filters written at a clean stop, so that a restart
 *	  forgets nothing a save had not written yet.
 *
 * A shared filter is saved to its row of tlbf_shared_filters by a saver
 * that the launcher starts in its database every tlbf.snapshot_interval,
 * and that exits once it has saved (worker.c): no process of tlbf but the
 * launcher stays.  At a clean stop, no worker can start any more, so the
 * launcher, as it leaves, writes each filter changed since its last save
 * to pg_tlbf/images/<database>_<name in hex> (tlbf_store_write_images),
 * with the XID that wrote the row the filter was last saved to.  When the
 * filter is loaded again, the image is taken instead of the row if it
 * starts from that same row (tlbf_image_read): else the row was written
 * since (by a save, a drop and a create, a restore), and the image is
 * stale and removed.  A save that commits removes the filter's image
 * (tlbf_image_remove); the launcher removes those of databases dropped.
 *
 * An image only ever holds more keys than its row (the same filter, later):
 * taken wrongly, it gives false positives, never a key forgotten.
 *
 * Every file is read as hostile: its size, header, CRC, database, name,
 * and the filter itself (tlbf_validate) are checked; a damaged one is set
 * aside (.damaged) with a WARNING and the row is loaded instead.
 *
 *-------------------------------------------------------------------------
 */
#include "shared_images.h"
#include "shared_value.h"

#include <sys/stat.h>
#include <unistd.h>

#include "access/transam.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "port/pg_crc32c.h"
#include "storage/fd.h"
#include "utils/memutils.h"

#define IMAGES_DIR			"pg_tlbf/images"
#define IMAGE_MAGIC			0x49424C54u /* "TLBI" */
#define IMAGE_VERSION		1

typedef struct ImageHeader
{
	uint32		magic;
	uint32		version;
	Oid			database;
	TransactionId row_xid;		/* wrote the row the filter started from */
	uint64		region;			/* the filter's region_bytes */
	uint64		bytes;			/* of the filter, after the header */
	char		name[NAMEDATALEN];
	pg_crc32c	crc;			/* of the header (crc 0) and the filter */
} ImageHeader;

/* pg_tlbf/images/<database>_<name in hex>: any name makes a file name. */
static char *
image_path(Oid database, const char *name)
{
	StringInfoData path;

	initStringInfo(&path);
	appendStringInfo(&path, IMAGES_DIR "/%u_", database);
	for (const unsigned char *c = (const unsigned char *) name; *c != '\0'; c++)
		appendStringInfo(&path, "%02x", *c);
	return path.data;
}

static pg_crc32c
image_crc(const ImageHeader *header, const void *filter)
{
	ImageHeader h = *header;
	pg_crc32c	crc;

	h.crc = 0;
	INIT_CRC32C(crc);
	COMP_CRC32C(crc, &h, sizeof(h));
	COMP_CRC32C(crc, filter, header->bytes);
	FIN_CRC32C(crc);
	return crc;
}

/*
 * Write the image of filter 'name' of 'database' (its saved row written by
 * 'row_xid', its region 'region' bytes) durably; false after a WARNING if
 * it cannot be (the launcher, which calls this, is leaving).
 */
bool
tlbf_image_write(Oid database, const char *name, TransactionId row_xid, Size region,
			const Tlbf *filter)
{
	ImageHeader header;
	char	   *path = image_path(database, name);
	char	   *temporary = psprintf("%s.tmp", path);
	int			fd;
	bool		written;

	memset(&header, 0, sizeof(header));
	header.magic = IMAGE_MAGIC;
	header.version = IMAGE_VERSION;
	header.database = database;
	header.row_xid = row_xid;
	header.region = region;
	header.bytes = VARSIZE(filter);
	strlcpy(header.name, name, NAMEDATALEN);
	header.crc = image_crc(&header, filter);

	if ((MakePGDirectory("pg_tlbf") < 0 && errno != EEXIST) ||
		(MakePGDirectory(IMAGES_DIR) < 0 && errno != EEXIST))
	{
		ereport(WARNING,
				(errcode_for_file_access(),
				 errmsg("could not create directory \"%s\": %m", IMAGES_DIR)));
		return false;
	}
	fd = OpenTransientFile(temporary, O_CREAT | O_TRUNC | O_WRONLY | PG_BINARY);
	if (fd < 0)
	{
		ereport(WARNING,
				(errcode_for_file_access(),
				 errmsg("could not create file \"%s\": %m", temporary)));
		return false;
	}
	written = write(fd, &header, sizeof(header)) == sizeof(header) &&
		write(fd, filter, header.bytes) == (ssize_t) header.bytes &&
		pg_fsync(fd) == 0;
	if (!written)
		ereport(WARNING,
				(errcode_for_file_access(),
				 errmsg("could not write file \"%s\": %m", temporary)));
	CloseTransientFile(fd);
	if (written)
		written = durable_rename(temporary, path, WARNING) == 0;
	else
		(void) unlink(temporary);
	return written;
}

/* Set a damaged image aside, so that it is neither read nor removed again. */
static void
set_aside(const char *path, const char *why)
{
	char	   *damaged = psprintf("%s.damaged", path);

	ereport(WARNING,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("tlbf: the image of a shared filter in file \"%s\" is damaged", path),
			 errdetail("%s The file is renamed \"%s.damaged\", and the filter is loaded from its saved row.",
					   why, path)));
	(void) durable_rename(path, damaged, WARNING);
	pfree(damaged);
}

/*
 * Filter 'name' of this database is about to be loaded from its row,
 * written by 'row_xid', with 'region' bytes: its image, checked, if one
 * starts from that row, else NULL (a stale image is removed, a damaged
 * one set aside).  ERROR if the image cannot be read now: the filter is
 * then not loaded, and its next use tries again.
 */
Tlbf *
tlbf_image_read(const char *name, TransactionId row_xid, Size region)
{
	char	   *path = image_path(MyDatabaseId, name);
	int			fd = OpenTransientFile(path, O_RDONLY | PG_BINARY);
	struct stat st;
	ImageHeader header;
	Tlbf	   *filter = NULL;
	const char *damaged = NULL;
	TlbfProblem problem;
	ssize_t		got;

	if (fd < 0 && errno == ENOENT)
		return NULL;
	if (fd < 0 || fstat(fd, &st) != 0 ||
		(got = read(fd, &header, sizeof(header))) < 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not read file \"%s\": %m", path)));
	if (got != sizeof(header) || header.magic != IMAGE_MAGIC ||
		header.version != IMAGE_VERSION || header.database != MyDatabaseId ||
		strncmp(header.name, name, NAMEDATALEN) != 0 ||
		header.bytes < sizeof(Tlbf) || header.bytes > MaxAllocSize ||
		st.st_size != (off_t) (sizeof(header) + header.bytes))
		damaged = "Its header does not describe it.";
	else
	{
		filter = palloc(header.bytes);
		got = read(fd, filter, header.bytes);
		if (got < 0)
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("could not read file \"%s\": %m", path)));
		if ((Size) got != header.bytes || image_crc(&header, filter) != header.crc)
			damaged = "Its checksum does not match.";
		else
		{
			/* its length word is the file's, not whatever the bytes say */
			SET_VARSIZE(filter, header.bytes);
			if (!shared_value_validate(filter, header.bytes, &problem))
				damaged = psprintf("%s.", problem.message);
		}
	}
	CloseTransientFile(fd);
	if (damaged != NULL)
	{
		set_aside(path, damaged);
		if (filter != NULL)
			pfree(filter);
		return NULL;
	}
	if (header.row_xid != row_xid || header.region != region || header.bytes > region)
	{
		/* its row was written again since: the row is newer */
		(void) unlink(path);
		pfree(filter);
		return NULL;
	}
	pfree(path);
	return filter;
}

/*
 * A save of filter 'name' of 'database' committed: its image, if any, is
 * older.  (Not made durable: an image that comes back after a crash no
 * longer starts from the filter's row, and is not taken.)
 */
void
tlbf_image_remove(Oid database, const char *name)
{
	char	   *path = image_path(database, name);

	if (unlink(path) != 0 && errno != ENOENT)
		ereport(WARNING,
				(errcode_for_file_access(),
				 errmsg("could not remove file \"%s\": %m", path)));
	pfree(path);
}

/*
 * A file name pg_tlbf/images/<database>_<name in hex>: its database and
 * name (palloc'd); false if it is not one (a .tmp or .damaged file).
 */
static bool
image_file(const char *file, Oid *database, char **name)
{
	unsigned int db;
	int			start = -1;
	size_t		hex;
	char	   *decoded;

	if (sscanf(file, "%u_%n", &db, &start) != 1 || start < 0)
		return false;
	hex = strspn(file + start, "0123456789abcdef");
	if (hex == 0 || hex % 2 != 0 || hex / 2 >= NAMEDATALEN || file[start + hex] != '\0')
		return false;
	decoded = palloc0(hex / 2 + 1);
	for (size_t i = 0; i < hex / 2; i++)
	{
		unsigned int byte;

		if (sscanf(file + start + 2 * i, "%2x", &byte) != 1 || byte == 0)
		{
			pfree(decoded);
			return false;
		}
		decoded[i] = (char) byte;
	}
	*database = db;
	*name = decoded;
	return true;
}

/* The names of this database's filters that have images. */
List *
tlbf_image_names(void)
{
	DIR		   *dir = AllocateDir(IMAGES_DIR);
	struct dirent *entry;
	List	   *names = NIL;

	if (dir == NULL)
		return NIL;
	while ((entry = ReadDir(dir, IMAGES_DIR)) != NULL)
	{
		Oid			database;
		char	   *name;

		if (image_file(entry->d_name, &database, &name))
		{
			if (database == MyDatabaseId)
				names = lappend(names, name);
			else
				pfree(name);
		}
	}
	FreeDir(dir);
	return names;
}

/*
 * Remove the images of databases that no longer exist, those not in
 * 'existing', and half-written ones (.tmp); return the databases that have
 * images left, for a saver to write them to their rows.  The launcher
 * calls this, and images are written only as a launcher leaves, so none
 * is being written while it looks.
 */
List *
tlbf_images_databases(const List *existing)
{
	DIR		   *dir = AllocateDir(IMAGES_DIR);
	struct dirent *entry;
	List	   *with_images = NIL;

	if (dir == NULL)
		return NIL;
	while ((entry = ReadDir(dir, IMAGES_DIR)) != NULL)
	{
		unsigned int database;
		size_t		length = strlen(entry->d_name);
		bool		temporary = length > 4 && strcmp(entry->d_name + length - 4, ".tmp") == 0;
		Oid			oid;
		char	   *name;
		char	   *path;

		if (sscanf(entry->d_name, "%u_", &database) != 1)
			continue;
		if (list_member_oid(existing, (Oid) database) && !temporary)
		{
			if (image_file(entry->d_name, &oid, &name))
			{
				with_images = list_append_unique_oid(with_images, oid);
				pfree(name);
			}
			continue;
		}
		path = psprintf(IMAGES_DIR "/%s", entry->d_name);
		durable_unlink(path, WARNING);
		pfree(path);
	}
	FreeDir(dir);
	return with_images;
}
