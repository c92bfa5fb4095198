/*-------------------------------------------------------------------------
 *
 * launcher_checkpoints.c
 *	  The launcher holds each checkpoint until every shared filter whose
 *	  state is not in its row has an image in the WAL after the
 *	  checkpoint's redo point.
 *
 * The keys committed to shared filters are in the WAL (shared_wal.c), but
 * a recovery replays it from the last checkpoint's redo point only, and a
 * checkpoint writes nothing of shared memory: a filter that changed before
 * that point and was not saved since would come back from its row, older.
 * So, as a full-page image follows a checkpoint for a page, an image of
 * each such filter must follow the redo point (shared_store.c,
 * tlbf_store_log_images), before the checkpoint record that makes the
 * point the one a recovery starts from.
 *
 * PostgreSQL has no checkpoint hook for extensions, but it lets a process
 * hold a checkpoint: one that has set its redo point and flushed waits,
 * before it writes its record, for every virtual transaction that holds
 * DELAY_CHKPT_COMPLETE when it looks.  The launcher holds that flag for
 * as long as it runs, under a virtual transaction id of its own (a fresh
 * local id when it is in no transaction, its transaction's when it is in
 * one).  Every HOLD_POLL_MS it reads the redo point; when a new one is
 * set, it writes the images, then takes another local id: a checkpoint
 * waits only for the ids it saw, so that one proceeds, and the next one
 * waits again.  (Not DELAY_CHKPT_START: PostgreSQL sets and clears that
 * one itself, when the launcher reads a catalog with checksums on.)
 *
 * A checkpoint that saw the id of a transaction of the launcher's own
 * waits for it to end, not for the images: so the launcher writes them at
 * the transaction's pre-commit too if the redo point moved, and sets the
 * flag again, under a new local id, as soon as the transaction has ended
 * (ProcArrayEndTransaction clears it).  A checkpoint that looked in that
 * gap of a few instructions would have had to set its redo point after
 * the pre-commit looked, and flush, within it.
 *
 * Nothing is held while the server is in recovery (no WAL is written; a
 * standby's launcher looks every HOLD_POLL_MS too, to hold from its
 * promotion on), nor when tlbf.wal_resource_manager is 0.
 *
 *-------------------------------------------------------------------------
 */
#include "background.h"

#include "access/xact.h"
#include "access/xlog.h"
#include "miscadmin.h"
#include "shared_directory.h"
#include "shared_store.h"
#include "shared_wal.h"
#include "storage/proc.h"
#include "storage/sinvaladt.h"

/* how often the launcher looks for a new redo point while it holds */
#define HOLD_POLL_MS	100

/* the redo point the last images were written after */
static XLogRecPtr imaged_for = InvalidXLogRecPtr;
static bool holding = false;

/* Should the launcher hold checkpoints? */
static bool
hold_wanted(void)
{
	return tlbf_wal_enabled() && tlbf_directory_available() && !RecoveryInProgress();
}

/*
 * Hold: the flag, under a local id of our own when we have none (in no
 * transaction, or in the callback of one that just ended, which still
 * counts as in a transaction but has let its id go).
 */
static void
hold(void)
{
	if (TLBF_PROC_LXID(MyProc) == InvalidLocalTransactionId)
		TLBF_PROC_LXID(MyProc) = GetNextLocalTransactionId();
	MyProc->delayChkptFlags |= DELAY_CHKPT_COMPLETE;
	holding = true;
}

/* Write the images if a checkpoint set a new redo point since we last did. */
static void
write_images_if_due(void)
{
	XLogRecPtr	redo = GetRedoRecPtr();
	int			written;

	if (redo == imaged_for)
		return;
	written = tlbf_store_log_images();
	imaged_for = redo;
	/* for the tests, which follow the launcher's decisions (docs/tests.md) */
	ereport(DEBUG1,
			(errmsg_internal("tlbf launcher: wrote %d images of shared filters to the WAL after redo point %X/%X",
							 written, LSN_FORMAT_ARGS(redo))));
}

static void
on_launcher_transaction_end(XactEvent event, void *arg)
{
	if (!holding)
		return;
	if (event == XACT_EVENT_PRE_COMMIT)
		write_images_if_due();
	else if (event == XACT_EVENT_COMMIT || event == XACT_EVENT_ABORT)
		hold();
}

/* Start holding checkpoints (the launcher, once, as it starts). */
void
tlbf_checkpoints_start(void)
{
	RegisterXactCallback(on_launcher_transaction_end, NULL);
}

/*
 * Serve the checkpoints: hold them if we do not yet; if one has set a new
 * redo point, write the images; then let the checkpoint that waits for us
 * go (a new local id), unless we are in a transaction, whose id a
 * checkpoint waits for until it ends.  Returns how long the launcher may
 * sleep before it must look again (-1: as long as it likes).
 */
long
tlbf_checkpoints_serve(void)
{
	if (!hold_wanted())
	{
		tlbf_checkpoints_stop();
		/* a standby looks often too, to hold from its promotion on */
		return tlbf_wal_enabled() && tlbf_directory_available() ? HOLD_POLL_MS : -1;
	}
	hold();
	write_images_if_due();
	if (!IsTransactionOrTransactionBlock())
		TLBF_PROC_LXID(MyProc) = GetNextLocalTransactionId();
	return HOLD_POLL_MS;
}

/* The launcher is leaving: let checkpoints go. */
void
tlbf_checkpoints_stop(void)
{
	if (holding)
		MyProc->delayChkptFlags &= ~DELAY_CHKPT_COMPLETE;
	holding = false;
}
