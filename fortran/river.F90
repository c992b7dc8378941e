! river.F90 - module river: River's Fortran 2008 API over iso_c_binding.
!
! This file is the module's public face: its constants, types and
! generics; the interface of every procedure is in one include file per
! concept (river_core.inc, river_coll.inc, river_pcoll.inc, river_dq.inc,
! river_gd.inc, river_emul.inc, river_flow.inc, river_stats.inc,
! river_module.inc),
! included below. The bodies, with the
! private bind(C) interfaces they call (named *_c), are in one submodule
! per concept: river_core.F90 (init, errors, logging, version, timers,
! topology, and the helpers all submodules share), river_coll.F90
! (schemas, single-disk collections, gensort, checksums), river_pcoll.F90
! (parallel collections: writing, reading, where they live, layout),
! river_dq.F90 (distributed queues), river_gd.F90 (graduated
! declustering), river_emul.F90 (throttles, perturbations, the CPU
! hog), river_flow.F90 (flows: building, running, loading specs),
! river_stats.F90 (the stats file) and
! river_module.F90 (modules written in Fortran: registering them, and
! what they call on their context).
!
! Every procedure that can fail takes `integer, optional, intent(out) ::
! ierr` last. With ierr present it receives RIVER_SUCCESS or a negative
! RIVER_E* code; without it, a failure ends the job (exit status 1; the
! message said once, by the lowest rank that failed; no backtrace).
! Strings coming back from River are allocatable character(len=:)
! values sized to fit. Constants come from
! river_constants.inc, generated from river.h.
!
! Handles (river_schema, river_coll, river_pcoll, river_pcoll_order,
! river_dq, river_gd, river_throttle, river_perturb, river_cpu_hog,
! river_flow) are
! opaque; a call that frees one (destroy, commit, close, stop) leaves it
! null. Communicators are type(MPI_Comm) from mpi_f08. Indices (schema
! fields, partitions, copies, disks, blocks) are 0-based as in C, like
! MPI ranks. C size_t is integer(c_size_t) and uint64_t is
! integer(c_int64_t) (values above huge(0_c_int64_t) do not occur;
! UINT64_MAX reads as -1).
!
! Records: River's record calls take any array (a bind(C) derived type
! laid out as the schema, numbers, bytes) as `type(*) :: records(*)`,
! passed by address as C's void *, with an explicit record count; buffers
! to read into take their size in bytes too (size(buf) * c_sizeof(buf(1));
! c_sizeof(buf) for an explicit-shape array). A non-contiguous section is
! passed as a contiguous copy. A derived type matches a schema only
! without padding: check that c_sizeof(one_record) equals
! river_schema_record_size. A scalar record is passed as [rec].
! river_pcoll_write, river_pcoll_read_block, river_dq_put and
! river_dq_try_put take `type(*), contiguous :: records(..)` (any rank,
! a scalar too; a section is passed as a contiguous copy), and river_put
! `records(:)` (rank 1: a scalar would be ambiguous with its c_ptr
! form); they check it (river__f_records in river_shim.c): an array of a
! derived type whose c_sizeof is not the record size is an error naming
! both sizes, never records written shifted; an array whose size is
! known must hold the records given.
!
! Statuses that are not failures never stop the program, with or without
! ierr: RIVER_EOS from river_coll_next, river_dq_get, river_dq_try_get and
! river_gd_next, river_get, river_try_get and river_select, RIVER_EAGAIN
! from river_dq_try_get, river_dq_try_put, the other river_dq_try_ calls
! and river_try_get.
!
! A module's context (river_ctx in C) is the type(c_ptr) River passes to
! the module function (river_module_fn); the context calls take it as
! their first argument.
!
! river/wait.h (river_wait, river_waitall, river_watchdog_fired) has no
! Fortran binding: with mpi_f08, use MPI_Wait/MPI_Waitall, or MPI_Test in
! a loop; a River call that returns RIVER_ETIMEDOUT says the watchdog fired.
module river
  use, intrinsic :: iso_c_binding
  use mpi_f08, only: MPI_Comm, MPI_Request
  implicit none
  private

  include 'river_constants.inc'

  !> An accumulating stopwatch, laid out as C's river_timer.
  type, bind(C), public :: river_timer
    real(c_double) :: start = 0.0_c_double
    real(c_double) :: total = 0.0_c_double
    integer(c_int) :: running = 0
  end type river_timer

  !> A log handler: receives each message that passes the level.
  !> msg is a NUL-terminated C string (see river_c_string).
  abstract interface
    subroutine river_log_handler(level, rank, msg, ctx) bind(C)
      import :: c_int, c_ptr
      integer(c_int), value :: level, rank
      type(c_ptr), value :: msg, ctx
    end subroutine river_log_handler
  end interface
  public :: river_log_handler

  !> A record schema (river/schema.h): from river_schema_parse,
  !> river_schema_create_default or river_schema_clone; free it with
  !> river_schema_destroy.
  type, public :: river_schema
    private
    type(c_ptr) :: ptr = c_null_ptr
  end type river_schema

  !> A single-disk collection being written (river_coll_create) or read
  !> (river_coll_open); see river/collection.h.
  type, public :: river_coll
    private
    type(c_ptr) :: ptr = c_null_ptr
  end type river_coll

  !> A parallel collection being written (river_pcoll_create) or read
  !> (river_pcoll_open); see river/pcoll.h.
  type, public :: river_pcoll
    private
    type(c_ptr) :: ptr = c_null_ptr
  end type river_pcoll

  !> Puts a parallel collection's blocks back into record order
  !> (river_pcoll_order_create / river_pcoll_order_destroy); see
  !> river/pcoll.h.
  type, public :: river_pcoll_order
    private
    type(c_ptr) :: ptr = c_null_ptr
    integer(c_size_t) :: record_size = 0
  end type river_pcoll_order

  !> What a single-disk collection's header says, laid out as C's
  !> river_coll_info. table_crc is C's uint32_t (may read negative);
  !> label is NUL-terminated: river_c_string(info%label) gives the text.
  type, bind(C), public :: river_coll_info
    integer(c_size_t) :: record_size = 0
    integer(c_size_t) :: block_size = 0
    integer(c_size_t) :: records_per_block = 0
    integer(c_int64_t) :: nrecords = 0
    integer(c_int64_t) :: nblocks = 0
    integer(c_int32_t) :: table_crc = 0
    character(kind=c_char) :: label(RIVER__COLL_INFO_LABEL_LEN) = c_null_char
  end type river_coll_info

  !> Facts about a parallel collection, laid out as C's river_pcoll_info.
  !> name and generation are NUL-terminated (see river_c_string); layout
  !> is a RIVER_LAYOUT_* value; ordered is 0 or 1.
  type, bind(C), public :: river_pcoll_info
    character(kind=c_char) :: name(RIVER__PCOLL_INFO_NAME_LEN) = c_null_char
    integer(c_int64_t) :: nrecords = 0
    integer(c_size_t) :: record_size = 0
    integer(c_int) :: npartitions = 0
    integer(c_int) :: ndisks = 0
    integer(c_int) :: replication = 0
    integer(c_int) :: layout = RIVER_LAYOUT_PARTITIONED
    integer(c_int) :: ordered = 0
    integer(c_size_t) :: block_size = 0
    character(kind=c_char) :: generation(RIVER__PCOLL_INFO_GEN_LEN) = &
        c_null_char
  end type river_pcoll_info

  !> One partition's entry in a parallel collection's partition table,
  !> laid out as C's river_pcoll_part (path: NUL-terminated file name
  !> relative to its disk; copy c is on disk mod(first_disk + c, ndisks)).
  type, bind(C), public :: river_pcoll_part
    integer(c_int64_t) :: nrecords = 0
    integer(c_int64_t) :: bytes = 0
    integer(c_int64_t) :: nblocks = 0
    integer(c_int32_t) :: checksum = 0
    integer(c_int) :: first_disk = 0
    character(kind=c_char) :: path(RIVER__PCOLL_PART_PATH_LEN) = c_null_char
  end type river_pcoll_part

  !> A distributed queue (river/dq.h): from river_dq_create, freed with
  !> river_dq_destroy (collective).
  type, public :: river_dq
    private
    type(c_ptr) :: ptr = c_null_ptr
    integer(c_size_t) :: record_size = 0
  end type river_dq

  !> A token bucket (river/throttle.h): river_throttle_create /
  !> river_throttle_destroy.
  type, public :: river_throttle
    private
    type(c_ptr) :: ptr = c_null_ptr
  end type river_throttle

  !> A parsed perturbation spec: river_perturb_parse /
  !> river_perturb_destroy.
  type, public :: river_perturb
    private
    type(c_ptr) :: ptr = c_null_ptr
  end type river_perturb

  !> A CPU-stealing thread: river_cpu_hog_start / river_cpu_hog_stop.
  type, public :: river_cpu_hog
    private
    type(c_ptr) :: ptr = c_null_ptr
  end type river_cpu_hog

  !> For RIVER_DQ_EXCHANGE: the consumer index (0..nconsumers-1) of the
  !> record at `record` (a pure function of its bytes; c_f_pointer makes
  !> it a Fortran record). ctx is river_dq_create's partition_ctx.
  abstract interface
    function river_dq_partition_fn(record, nconsumers, ctx) bind(C)
      import :: c_int, c_ptr
      type(c_ptr), value :: record
      integer(c_int), value :: nconsumers
      type(c_ptr), value :: ctx
      integer(c_int) :: river_dq_partition_fn
    end function river_dq_partition_fn
  end interface
  public :: river_dq_partition_fn

  !> A rank's queue counters, laid out as C's river_dq_stats (uint64_t
  !> as integer(c_int64_t)). msgs_to (nconsumers entries) and msgs_from
  !> (nproducers entries) point into the queue, valid until it is
  !> destroyed, or are null: c_f_pointer(s%msgs_to, a, [s%nconsumers])
  !> with an integer(c_int64_t), pointer :: a(:) reads them.
  type, bind(C), public :: river_dq_stats
    integer(c_int64_t) :: records_out = 0, bytes_out = 0, messages_out = 0
    integer(c_int64_t) :: records_in = 0, bytes_in = 0, messages_in = 0
    type(c_ptr) :: msgs_to = c_null_ptr
    type(c_ptr) :: msgs_from = c_null_ptr
    integer(c_int64_t) :: credit_stalls = 0
    real(c_double) :: put_wait_seconds = 0.0_c_double
    real(c_double) :: get_wait_seconds = 0.0_c_double
    integer(c_int) :: nproducers = 0, nconsumers = 0
    integer(c_int) :: producer_index = -1, consumer_index = -1
    integer(c_int64_t) :: credits_paced = 0, messages_waiting = 0
    integer(c_int64_t) :: messages_static = 0
    integer(c_int) :: credit_path = 0
    integer(c_int64_t) :: memory_bytes = 0
    integer(c_int64_t) :: peer_steps = 0
  end type river_dq_stats

  !> A graduated-declustering read of a mirrored parallel collection
  !> (river/gd.h): from river_gd_open, freed with river_gd_close
  !> (collective). river_gd_create (a custom source read through a C
  !> callback) has no Fortran binding: GD from Fortran reads a collection.
  type, public :: river_gd
    private
    type(c_ptr) :: ptr = c_null_ptr
    integer(c_size_t) :: record_size = 0
  end type river_gd

  !> A rank's GD counters, laid out as C's river_gd_stats (uint64_t as
  !> integer(c_int64_t)). Client side (the partitions this rank reads):
  !> blocks_received, bytes_received, failovers (blocks asked again of
  !> another mirror), seconds (from the end of river_gd_open to its last
  !> block; 0 on a rank with no partitions). Server side (the disks this
  !> rank serves): blocks_served (a piece of a split block counts as
  !> one), bytes_served, seeks (stream switches).
  !> End game (client): cancels (blocks it asked a busy mirror to
  !> withdraw), cancelled (of those, withdrawn and asked of an idle one).
  !> served_seconds (server): from the start until its disks were done
  !> with their last block.
  type, bind(C), public :: river_gd_stats
    integer(c_int64_t) :: blocks_received = 0, bytes_received = 0
    integer(c_int64_t) :: failovers = 0
    integer(c_int64_t) :: blocks_served = 0, bytes_served = 0, seeks = 0
    real(c_double) :: seconds = 0.0_c_double
    integer(c_int64_t) :: cancels = 0, cancelled = 0
    real(c_double) :: served_seconds = 0.0_c_double
  end type river_gd_stats

  !> A flow (river/flow.h): stages connected by edges, from
  !> river_flow_create or river_flow_load; freed with river_flow_destroy.
  type, public :: river_flow
    private
    type(c_ptr) :: ptr = c_null_ptr
  end type river_flow

  !> A stats file being built (river/stats.h, doc/stats.md), from
  !> river_stats_create; freed with river_stats_destroy.
  type, public :: river_stats
    private
    type(c_ptr) :: ptr = c_null_ptr
  end type river_stats

  !> A stage's totals after a run (river_flow_stage_stats), laid out as
  !> C's river_stage_stats (uint64_t as integer(c_int64_t)): sums over
  !> its instances; seconds, the slowest instance's run time; slowest,
  !> its instance number.
  type, bind(C), public :: river_stage_stats
    integer(c_int) :: ninstances = 0
    integer(c_int64_t) :: records_in = 0, bytes_in = 0
    integer(c_int64_t) :: records_out = 0, bytes_out = 0
    real(c_double) :: seconds = 0.0_c_double
    integer(c_int) :: slowest = -1
    integer(c_int) :: in_credits = 0
  end type river_stage_stats

  !> A module instance's counters (river_ctx_stats), laid out as C's
  !> river_module_stats: records and bytes over all inputs and outputs,
  !> seconds blocked in get/select and in put/commit, and run time.
  type, bind(C), public :: river_module_stats
    integer(c_int64_t) :: records_in = 0, bytes_in = 0
    integer(c_int64_t) :: records_out = 0, bytes_out = 0
    real(c_double) :: get_wait_seconds = 0.0_c_double
    real(c_double) :: put_wait_seconds = 0.0_c_double
    real(c_double) :: run_seconds = 0.0_c_double
  end type river_module_stats

  !> A module: River calls it once per instance with its context (pass
  !> it to river_get, river_put, ...) and it returns RIVER_SUCCESS when
  !> done, or an error code (RIVER_EOS counts as success). Write it as
  !>   integer(c_int) function my_module(ctx) bind(C)
  !>     type(c_ptr), value :: ctx
  !> in a module (a bind(C) procedure cannot be internal) and register
  !> it with river_module_register.
  abstract interface
    function river_module_fn(ctx) bind(C)
      import :: c_int, c_ptr
      type(c_ptr), value :: ctx
      integer(c_int) :: river_module_fn
    end function river_module_fn
  end interface
  public :: river_module_fn

  ! Compile-time check that the public bind(C) types above are the size of
  ! their C structs (sizes from river_gen_constants): a mismatch fails the
  ! build here with a division by zero. Each submodule checks the private
  ! option structs it builds the same way.
  integer, parameter :: layout_ok = 1 / merge(1, 0, &
      c_sizeof(river_coll_info()) == RIVER__SIZEOF_COLL_INFO .and. &
      c_sizeof(river_pcoll_info()) == RIVER__SIZEOF_PCOLL_INFO .and. &
      c_sizeof(river_pcoll_part()) == RIVER__SIZEOF_PCOLL_PART .and. &
      c_sizeof(river_dq_stats()) == RIVER__SIZEOF_DQ_STATS .and. &
      c_sizeof(river_gd_stats()) == RIVER__SIZEOF_GD_STATS .and. &
      c_sizeof(river_stage_stats()) == RIVER__SIZEOF_STAGE_STATS .and. &
      c_sizeof(river_module_stats()) == RIVER__SIZEOF_MODULE_STATS)

  public :: river_init, river_finalize, river_initialized
  public :: river_get_version, river_build_info
  public :: river_strerror, river_err_name
  public :: river_log, river_log_set_level, river_log_get_level
  public :: river_log_parse_level, river_log_level_name
  public :: river_log_set_handler, river_log_reset_handler
  public :: river_wtime
  public :: river_timer_reset, river_timer_start, river_timer_stop
  public :: river_timer_elapsed
  public :: river_topo_describe, river_node_name, river_topo_bind
  public :: river_c_string
  ! river/units.h
  public :: river_parse_size, river_format_size
  ! river/schema.h
  public :: river_schema_parse, river_schema_create_default
  public :: river_schema_clone, river_schema_destroy
  public :: river_schema_record_size, river_schema_nfields
  public :: river_schema_field, river_schema_key, river_schema_find
  public :: river_schema_format, river_schema_equal, river_schema_compare
  public :: river_type_name
  ! river/collection.h
  public :: river_coll_create, river_coll_append, river_coll_commit
  public :: river_coll_open, river_coll_close, river_coll_stat
  public :: river_coll_read_block, river_coll_next, river_coll_rewind
  public :: river_coll_verify
  ! river/pcoll.h
  public :: river_pcoll_create, river_pcoll_write, river_pcoll_commit
  public :: river_pcoll_begin_partition
  public :: river_pcoll_open, river_pcoll_close, river_pcoll_info_get
  public :: river_pcoll_hold_partitions
  public :: river_pcoll_schema, river_pcoll_partition, river_pcoll_disk_path
  public :: river_pcoll_read_block, river_pcoll_blocks
  public :: river_pcoll_verify_copy, river_pcoll_verify_blocks
  public :: river_pcoll_remove, river_pcoll_gc, river_pcoll_purge
  public :: river_pcoll_check_name, river_pcoll_copy_disk
  public :: river_pcoll_node_local, river_pcoll_disk_ranks
  public :: river_pcoll_remove_all
  public :: river_pcoll_root, river_pcoll_list, river_pcoll_split
  public :: river_pcoll_disk_dir
  public :: river_pcoll_order_create, river_pcoll_order_add
  public :: river_pcoll_order_flush, river_pcoll_order_destroy
  ! river/gensort.h, river/checksum.h
  public :: river_gensort_fill, river_crc32c, river_hash64
  ! river/dq.h
  public :: river_dq_create, river_dq_put, river_dq_try_put, river_dq_close
  public :: river_dq_get, river_dq_try_get, river_dq_release
  public :: river_dq_end_unit, river_dq_unit, river_dq_reserve
  public :: river_dq_set_tag, river_dq_tag
  public :: river_dq_commit, river_dq_try_reserve, river_dq_try_commit
  public :: river_dq_try_close, river_dq_try_end_unit
  public :: river_dq_stats_get, river_dq_destroy
  ! river/gd.h (river_gd_create, a custom C callback source, is not bound)
  public :: river_gd_open, river_gd_next, river_gd_stats_get, river_gd_close
  public :: river_gd_fluid_ideal
  ! river/throttle.h
  public :: river_throttle_create, river_throttle_destroy
  public :: river_throttle_consume, river_throttle_set_factor
  public :: river_throttle_rate, river_throttle_slept
  public :: river_perturb_parse, river_perturb_destroy, river_perturb_factor
  public :: river_perturb_count, river_perturb_max_index
  public :: river_cpu_hog_start, river_cpu_hog_stop
  ! river/flow.h
  public :: river_flow_create, river_flow_origin, river_flow_place
  public :: river_flow_arg, river_flow_attach, river_flow_check
  public :: river_flow_go, river_flow_go_async, river_flow_test
  public :: river_flow_progress
  public :: river_flow_wait, river_flow_stage_stats, river_flow_nstages
  public :: river_flow_stage, river_flow_dot, river_flow_load
  public :: river_flow_destroy
  ! river/stats.h
  public :: river_stats_create, river_stats_add_flow, river_stats_add_gd
  public :: river_stats_add_number, river_stats_add_work, river_stats_write
  public :: river_stats_destroy
  ! river/module.h
  public :: river_module_register, river_plugin_load, river_ctx_user
  public :: river_ctx_instance
  public :: river_ctx_stage, river_ctx_ports, river_ctx_log
  public :: river_input_schema, river_output_schema
  public :: river_arg_str, river_arg_int, river_arg_uint, river_arg_double
  public :: river_arg_bool
  public :: river_get, river_try_get, river_select, river_put
  public :: river_reserve, river_commit, river_end_unit
  public :: river_ctx_comm, river_ctx_wait, river_ctx_stats
  public :: river_ctx_keep_gd

  !> The text of a NUL-terminated C string: at a c_ptr, or in a
  !> character(kind=c_char) array (such as river_pcoll_info%name).
  interface river_c_string
    module procedure river_c_string_ptr, river_c_string_chars
  end interface river_c_string

  !> The next block of a single-disk collection being read as a stream:
  !> either borrowed (a c_ptr to the records, valid until the next call on
  !> the collection; c_f_pointer makes it a Fortran array) or copied into
  !> an allocatable integer(c_int8_t) array sized to the block's bytes.
  interface river_coll_next
    module procedure river_coll_next_ptr, river_coll_next_bytes
  end interface river_coll_next

  !> Give a parallel collection's block to a river_pcoll_order and get
  !> the records now in record order: borrowed (records and ready are
  !> c_ptrs; ready stays valid until the next call on the order, or is
  !> records itself for a partitioned collection) or copied (records any
  !> array, ready an allocatable integer(c_int8_t) array sized to the
  !> records' bytes).
  interface river_pcoll_order_add
    module procedure river_pcoll_order_add_ptr, river_pcoll_order_add_bytes
  end interface river_pcoll_order_add

  !> The records a river_pcoll_order still holds at the end, borrowed or
  !> copied as river_pcoll_order_add gives them.
  interface river_pcoll_order_flush
    module procedure river_pcoll_order_flush_ptr, river_pcoll_order_flush_bytes
  end interface river_pcoll_order_flush

  !> The next message of a distributed queue (consumer), borrowed (a
  !> c_ptr to its records, valid until river_dq_release or the next get)
  !> or copied into an allocatable integer(c_int8_t) array; RIVER_EOS at
  !> the end is a status, not an error.
  interface river_dq_get
    module procedure river_dq_get_ptr, river_dq_get_bytes
  end interface river_dq_get

  !> river_dq_get without blocking: RIVER_EAGAIN (a status, not an
  !> error) when no message is ready.
  interface river_dq_try_get
    module procedure river_dq_try_get_ptr, river_dq_try_get_bytes
  end interface river_dq_try_get

  !> The next block of a GD read, borrowed (a c_ptr to its records, valid
  !> until the next river_gd_next or river_gd_close) or copied into an
  !> allocatable integer(c_int8_t) array; with its partition and block
  !> (0-based, as in C). RIVER_EOS at the end is a status, not an error.
  interface river_gd_next
    module procedure river_gd_next_ptr, river_gd_next_bytes
  end interface river_gd_next

  !> A module's next message from an input, borrowed: as a c_ptr to its
  !> records (c_f_pointer makes them an array of a bind(C) type) or as an
  !> integer(c_int8_t) pointer to its bytes; RIVER_EOS at the end is a
  !> status, not an error.
  interface river_get
    module procedure river_get_ptr, river_get_bytes
  end interface river_get

  !> river_get without waiting: RIVER_EAGAIN (a status) when nothing is
  !> there now.
  interface river_try_get
    module procedure river_try_get_ptr, river_try_get_bytes
  end interface river_try_get

  !> A module's put (records copied): from any array of records, or from
  !> a c_ptr to them (such as river_get's).
  interface river_put
    module procedure river_put_array, river_put_ptr
  end interface river_put

  !> river_hash64 (C): splitmix64 of x; the uint64 travels as int64 bits.
  interface
    function river_hash64(x) bind(C, name='river_hash64')
      import :: c_int64_t
      integer(c_int64_t), value :: x
      integer(c_int64_t) :: river_hash64
    end function river_hash64
  end interface

  ! A C function that writes a string into the caller's buffer, as
  ! river_build_info does (len: buf's size in; out, the string's length
  ! without the NUL, or with RIVER_ENOBUFS the size needed). h and d name
  ! what is asked about where the C function takes it (a schema; a
  ! parallel collection and a disk; parallel-collection options).
  ! Submodules wrap their C functions in one of these for fetch_string.
  abstract interface
    function string_fill(h, d, buf, len) result(rc)
      import :: c_char, c_int, c_ptr, c_size_t
      type(c_ptr), intent(in) :: h
      integer(c_int), intent(in) :: d
      character(kind=c_char), intent(out) :: buf(*)
      integer(c_size_t), intent(inout) :: len
      integer(c_int) :: rc
    end function string_fill
  end interface

  ! A records argument (any rank, any type) checked against the record
  ! size rs: a derived type's elements must be rs bytes each (c_sizeof),
  ! the array contiguous and, where its size is known and n > 0, at least
  ! n * rs bytes; base gets its address. RIVER_EINVAL, said naming what,
  ! if not (river__f_records in river_shim.c).
  interface
    function river_f_records(a, n, rs, what, base) &
        bind(C, name='river__f_records')
      import :: c_int, c_ptr, c_size_t, c_char
      type(*), intent(in) :: a(..)
      integer(c_size_t), value :: n, rs
      character(kind=c_char), intent(in) :: what(*)
      type(c_ptr), intent(out) :: base
      integer(c_int) :: river_f_records
    end function river_f_records
  end interface

  ! Private helpers every submodule uses, kept in one place (bodies in
  ! river_core.F90).
  interface
    ! Hand rc to ierr if present; otherwise stop on failure with the
    ! message, naming the procedure that failed.
    module subroutine river_check(rc, what, ierr)
      integer(c_int), intent(in) :: rc
      character(len=*), intent(in) :: what
      integer, optional, intent(out) :: ierr
    end subroutine river_check

    ! Fortran string -> NUL-terminated C character array.
    pure module function c_str(s) result(cs)
      character(len=*), intent(in) :: s
      character(kind=c_char) :: cs(len(s) + 1)
    end function c_str

    ! A NUL-terminated copy of s in cs, and c_loc of it in ptr (for the
    ! string fields of C option structs; cs must outlive the C call).
    module subroutine c_str_ptr(s, cs, ptr)
      character(len=*), intent(in) :: s
      character(kind=c_char), allocatable, target, intent(inout) :: cs(:)
      type(c_ptr), intent(inout) :: ptr
    end subroutine c_str_ptr

    ! The string fill writes for (h, d): asks its length, then fetches it
    ! (again if it grew meanwhile). str is allocated only on
    ! RIVER_SUCCESS.
    module subroutine fetch_string(fill, h, d, str, rc)
      procedure(string_fill) :: fill
      type(c_ptr), intent(in) :: h
      integer(c_int), intent(in) :: d
      character(len=:), allocatable, intent(out) :: str
      integer(c_int), intent(out) :: rc
    end subroutine fetch_string

    ! buf (re)allocated to exactly nbytes, holding the nbytes at r: the
    ! copied ("_bytes") variants of the readers share it.
    module subroutine bytes_from(r, nbytes, buf)
      type(c_ptr), intent(in) :: r
      integer(c_size_t), intent(in) :: nbytes
      integer(c_int8_t), allocatable, intent(inout) :: buf(:)
    end subroutine bytes_from
  end interface

  ! ------------------------------------------------------------------ core
  include 'river_core.inc'

  ! ----------------------------------------------------------- collections
  include 'river_coll.inc'

  ! -------------------------------------------------- parallel collections
  include 'river_pcoll.inc'

  ! ---------------------------------------------------- distributed queues
  include 'river_dq.inc'

  ! ------------------------------------------------ graduated declustering
  include 'river_gd.inc'

  ! ------------------------------------------------------------- emulation
  include 'river_emul.inc'

  ! ----------------------------------------------------------------- flows
  include 'river_flow.inc'

  ! ------------------------------------------------------ the stats file
  include 'river_stats.inc'

  ! --------------------------------------------------------------- modules
  include 'river_module.inc'

end module river
