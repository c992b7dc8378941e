! river.F90 - module river: River's Fortran 2008 API over iso_c_binding.
!
! This file is the module's public face: its constants, types and the
! interface of every procedure. The bodies, with the private bind(C)
! interfaces they call (named *_c), are in one submodule per concept:
! river_core.F90 (init, errors, logging, version, timers, topology, and
! the helpers all submodules share), river_coll.F90 (schemas,
! collections, parallel collections, gensort, checksums), river_dq.F90
! (distributed queues), river_gd.F90 (graduated declustering) and
! river_emul.F90 (throttles, perturbations, the CPU hog).
!
! Every procedure that can fail takes `integer, optional, intent(out) ::
! ierr` last. With ierr present it receives RIVER_SUCCESS or a negative
! RIVER_E* code; without it, a failure stops the program (error stop)
! with the message. Strings coming back from River are allocatable
! character(len=:) values sized to fit. Constants come from
! river_constants.inc, generated from river.h.
!
! Handles (river_schema, river_coll, river_pcoll, river_dq, river_gd,
! river_throttle, river_perturb, river_cpu_hog) are opaque; a call that
! frees one (destroy, commit, close, stop) leaves it null. Communicators are
! type(MPI_Comm) from mpi_f08. Indices (schema fields, partitions, copies,
! disks, blocks) are 0-based as in C, like MPI ranks. C size_t is
! integer(c_size_t) and uint64_t is integer(c_int64_t) (values above
! huge(0_c_int64_t) do not occur; UINT64_MAX reads as -1).
!
! Records: River's record calls take any array (a bind(C) derived type
! laid out as the schema, numbers, bytes) as `type(*) :: records(*)`,
! passed by address as C's void *, with an explicit record count; buffers
! to read into take their size in bytes too (size(buf) * c_sizeof(buf(1));
! c_sizeof(buf) for an explicit-shape array). A non-contiguous section is
! passed as a contiguous copy. A derived type matches a schema only
! without padding: check that c_sizeof(one_record) equals
! river_schema_record_size. A scalar record is passed as [rec].
!
! Statuses that are not failures never stop the program, with or without
! ierr: RIVER_EOS from river_coll_next, river_dq_get, river_dq_try_get and
! river_gd_next, RIVER_EAGAIN from river_dq_try_get and river_dq_try_put.
!
! river/wait.h (river_wait, river_waitall) has no Fortran binding: with
! mpi_f08, use MPI_Wait/MPI_Waitall, or MPI_Test in a loop.
module river
  use, intrinsic :: iso_c_binding
  use mpi_f08, only: MPI_Comm
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
  !> rank serves): blocks_served, bytes_served, seeks (stream switches).
  type, bind(C), public :: river_gd_stats
    integer(c_int64_t) :: blocks_received = 0, bytes_received = 0
    integer(c_int64_t) :: failovers = 0
    integer(c_int64_t) :: blocks_served = 0, bytes_served = 0, seeks = 0
    real(c_double) :: seconds = 0.0_c_double
  end type river_gd_stats

  ! Compile-time check that the public bind(C) types above are the size of
  ! their C structs (sizes from river_gen_constants): a mismatch fails the
  ! build here with a division by zero. Each submodule checks the private
  ! option structs it builds the same way.
  integer, parameter :: layout_ok = 1 / merge(1, 0, &
      c_sizeof(river_coll_info()) == RIVER__SIZEOF_COLL_INFO .and. &
      c_sizeof(river_pcoll_info()) == RIVER__SIZEOF_PCOLL_INFO .and. &
      c_sizeof(river_pcoll_part()) == RIVER__SIZEOF_PCOLL_PART .and. &
      c_sizeof(river_dq_stats()) == RIVER__SIZEOF_DQ_STATS .and. &
      c_sizeof(river_gd_stats()) == RIVER__SIZEOF_GD_STATS)

  public :: river_init, river_finalize, river_initialized
  public :: river_get_version, river_build_info
  public :: river_strerror, river_err_name
  public :: river_log, river_log_set_level, river_log_get_level
  public :: river_log_parse_level, river_log_level_name
  public :: river_log_set_handler, river_log_reset_handler
  public :: river_wtime
  public :: river_timer_reset, river_timer_start, river_timer_stop
  public :: river_timer_elapsed
  public :: river_topo_describe
  public :: river_c_string
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
  public :: river_pcoll_open, river_pcoll_close, river_pcoll_info_get
  public :: river_pcoll_schema, river_pcoll_partition, river_pcoll_disk_path
  public :: river_pcoll_read_block, river_pcoll_blocks
  public :: river_pcoll_verify_copy, river_pcoll_remove
  public :: river_pcoll_check_name
  ! river/gensort.h, river/checksum.h
  public :: river_gensort_fill, river_crc32c, river_hash64
  ! river/dq.h
  public :: river_dq_create, river_dq_put, river_dq_try_put, river_dq_close
  public :: river_dq_get, river_dq_try_get, river_dq_release
  public :: river_dq_end_unit, river_dq_unit, river_dq_reserve
  public :: river_dq_commit
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
  ! parallel collection and a disk). Submodules wrap their C functions
  ! in one of these for fetch_string.
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

    ! The string fill writes for (h, d): asks its length, then fetches it.
    ! str is allocated only on RIVER_SUCCESS.
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
  ! river/core.h, river/topo.h: in river_core.F90.
  interface
    !> Copy the NUL-terminated C string at ptr into a Fortran string
    !> ('' for a null pointer). Public as generic river_c_string.
    module function river_c_string_ptr(ptr) result(str)
      type(c_ptr), intent(in) :: ptr
      character(len=:), allocatable :: str
    end function river_c_string_ptr

    !> The text in a character(kind=c_char) array up to its first NUL (or
    !> all of it). Public as generic river_c_string.
    module function river_c_string_chars(chars) result(str)
      character(kind=c_char), intent(in) :: chars(:)
      character(len=:), allocatable :: str
    end function river_c_string_chars

    !> Initialise River (and MPI, if the caller has not; see river_init in
    !> river.h). Collective when it initialises MPI.
    module subroutine river_init(ierr)
      integer, optional, intent(out) :: ierr
    end subroutine river_init

    !> Undo one river_init; finalises MPI only if River initialised it.
    module subroutine river_finalize(ierr)
      integer, optional, intent(out) :: ierr
    end subroutine river_finalize

    module subroutine river_initialized(flag, ierr)
      logical, intent(out) :: flag
      integer, optional, intent(out) :: ierr
    end subroutine river_initialized

    !> The version of the River library linked at run time.
    module subroutine river_get_version(major, minor, release, ierr)
      integer, intent(out) :: major, minor, release
      integer, optional, intent(out) :: ierr
    end subroutine river_get_version

    !> One line describing River and the MPI, HDF5 and hwloc it runs on.
    module subroutine river_build_info(info, ierr)
      character(len=:), allocatable, intent(out) :: info
      integer, optional, intent(out) :: ierr
    end subroutine river_build_info

    !> One line describing the host, cores and binding of this process.
    module subroutine river_topo_describe(desc, ierr)
      character(len=:), allocatable, intent(out) :: desc
      integer, optional, intent(out) :: ierr
    end subroutine river_topo_describe

    !> The message for an error code (never empty).
    module function river_strerror(err) result(msg)
      integer, intent(in) :: err
      character(len=:), allocatable :: msg
    end function river_strerror

    !> The name of an error code, e.g. 'RIVER_EINVAL'.
    module function river_err_name(err) result(name)
      integer, intent(in) :: err
      character(len=:), allocatable :: name
    end function river_err_name

    !> Log msg at level (RIVER_LOG_ERROR .. RIVER_LOG_DEBUG).
    module subroutine river_log(level, msg, ierr)
      integer, intent(in) :: level
      character(len=*), intent(in) :: msg
      integer, optional, intent(out) :: ierr
    end subroutine river_log

    module subroutine river_log_set_level(level, ierr)
      integer, intent(in) :: level
      integer, optional, intent(out) :: ierr
    end subroutine river_log_set_level

    module subroutine river_log_get_level(level, ierr)
      integer, intent(out) :: level
      integer, optional, intent(out) :: ierr
    end subroutine river_log_get_level

    !> Parse 'error', 'warn', 'info' or 'debug' (any case) into level.
    module subroutine river_log_parse_level(name, level, ierr)
      character(len=*), intent(in) :: name
      integer, intent(out) :: level
      integer, optional, intent(out) :: ierr
    end subroutine river_log_parse_level

    !> The level's name ('error' .. 'debug'; 'unknown' for other values).
    module function river_log_level_name(level) result(name)
      integer, intent(in) :: level
      character(len=:), allocatable :: name
    end function river_log_level_name

    !> Send log messages to handler (with ctx passed through) instead of
    !> stderr.
    module subroutine river_log_set_handler(handler, ctx, ierr)
      procedure(river_log_handler) :: handler
      type(c_ptr), intent(in) :: ctx
      integer, optional, intent(out) :: ierr
    end subroutine river_log_set_handler

    !> Send log messages to stderr again.
    module subroutine river_log_reset_handler(ierr)
      integer, optional, intent(out) :: ierr
    end subroutine river_log_reset_handler

    !> Seconds on a monotonic wall clock.
    module function river_wtime() result(t)
      real(c_double) :: t
    end function river_wtime

    module subroutine river_timer_reset(t, ierr)
      type(river_timer), intent(inout) :: t
      integer, optional, intent(out) :: ierr
    end subroutine river_timer_reset

    module subroutine river_timer_start(t, ierr)
      type(river_timer), intent(inout) :: t
      integer, optional, intent(out) :: ierr
    end subroutine river_timer_start

    module subroutine river_timer_stop(t, ierr)
      type(river_timer), intent(inout) :: t
      integer, optional, intent(out) :: ierr
    end subroutine river_timer_stop

    module subroutine river_timer_elapsed(t, seconds, ierr)
      type(river_timer), intent(in) :: t
      real(c_double), intent(out) :: seconds
      integer, optional, intent(out) :: ierr
    end subroutine river_timer_elapsed
  end interface

  ! ----------------------------------------------------------- collections
  ! river/schema.h, river/collection.h, river/pcoll.h, river/gensort.h,
  ! river/checksum.h: in river_coll.F90.
  interface
    !> Parse a schema's text form ("NAME:TYPE[,...][;key=NAME]") into a new
    !> schema. Bad text gives RIVER_EFORMAT (and a logged message).
    module subroutine river_schema_parse(text, schema, ierr)
      character(len=*), intent(in) :: text
      type(river_schema), intent(out) :: schema
      integer, optional, intent(out) :: ierr
    end subroutine river_schema_parse

    !> The sort benchmark's schema, RIVER_SCHEMA_DEFAULT.
    module subroutine river_schema_create_default(schema, ierr)
      type(river_schema), intent(out) :: schema
      integer, optional, intent(out) :: ierr
    end subroutine river_schema_create_default

    !> A deep copy of schema (destroy both).
    module subroutine river_schema_clone(schema, copy, ierr)
      type(river_schema), intent(in) :: schema
      type(river_schema), intent(out) :: copy
      integer, optional, intent(out) :: ierr
    end subroutine river_schema_clone

    !> Free schema and make it null; a null schema is left alone.
    module subroutine river_schema_destroy(schema)
      type(river_schema), intent(inout) :: schema
    end subroutine river_schema_destroy

    !> The record size in bytes.
    module subroutine river_schema_record_size(schema, size, ierr)
      type(river_schema), intent(in) :: schema
      integer(c_size_t), intent(out) :: size
      integer, optional, intent(out) :: ierr
    end subroutine river_schema_record_size

    !> The number of fields.
    module subroutine river_schema_nfields(schema, n, ierr)
      type(river_schema), intent(in) :: schema
      integer, intent(out) :: n
      integer, optional, intent(out) :: ierr
    end subroutine river_schema_nfields

    !> Field i (0-based): any of its name, type (RIVER_TYPE_*), element
    !> count (N of char[N]/bytes[N]; 1 for numbers) and byte offset.
    !> RIVER_EINVAL if i is out of range.
    module subroutine river_schema_field(schema, i, name, type, count, offset, &
                                         ierr)
      type(river_schema), intent(in) :: schema
      integer, intent(in) :: i
      character(len=:), allocatable, optional, intent(out) :: name
      integer, optional, intent(out) :: type
      integer(c_size_t), optional, intent(out) :: count, offset
      integer, optional, intent(out) :: ierr
    end subroutine river_schema_field

    !> The key: any of its field index (0-based), offset and size in bytes.
    module subroutine river_schema_key(schema, field, offset, size, ierr)
      type(river_schema), intent(in) :: schema
      integer, optional, intent(out) :: field
      integer(c_size_t), optional, intent(out) :: offset, size
      integer, optional, intent(out) :: ierr
    end subroutine river_schema_key

    !> The index (0-based) of the field called name; RIVER_ENOTFOUND if
    !> there is none.
    module subroutine river_schema_find(schema, name, field, ierr)
      type(river_schema), intent(in) :: schema
      character(len=*), intent(in) :: name
      integer, intent(out) :: field
      integer, optional, intent(out) :: ierr
    end subroutine river_schema_find

    !> The canonical text form (always with ";key=NAME").
    module subroutine river_schema_format(schema, text, ierr)
      type(river_schema), intent(in) :: schema
      character(len=:), allocatable, intent(out) :: text
      integer, optional, intent(out) :: ierr
    end subroutine river_schema_format

    !> Whether a and b have the same fields (names, types, sizes, order) and
    !> key.
    module subroutine river_schema_equal(a, b, equal, ierr)
      type(river_schema), intent(in) :: a, b
      logical, intent(out) :: equal
      integer, optional, intent(out) :: ierr
    end subroutine river_schema_equal

    !> Compare the keys of records a and b (each a record laid out as the
    !> schema: a scalar of a matching bind(C) type, or the first element of
    !> one in an array): cmp < 0, 0 or > 0.
    module subroutine river_schema_compare(schema, a, b, cmp, ierr)
      type(river_schema), intent(in) :: schema
      type(*), intent(in) :: a, b
      integer, intent(out) :: cmp
      integer, optional, intent(out) :: ierr
    end subroutine river_schema_compare

    !> A RIVER_TYPE_* value's name as in the text form ("int32", ...,
    !> "char", "bytes"); "unknown" for other values.
    module function river_type_name(type) result(name)
      integer, intent(in) :: type
      character(len=:), allocatable :: name
    end function river_type_name

    !> Start writing a collection of record_size-byte records at path
    !> (written as "<path>.tmp" until river_coll_commit). block_size: a
    !> multiple of RIVER_COLL_ALIGN (default RIVER_COLL_DEFAULT_BLOCK_SIZE);
    !> direct_io: bypass the page cache where allowed; label: text kept in
    !> the header (at most RIVER_COLL_LABEL_MAX bytes).
    module subroutine river_coll_create(path, record_size, coll, block_size, &
                                        direct_io, label, ierr)
      character(len=*), intent(in) :: path
      integer(c_size_t), intent(in) :: record_size
      type(river_coll), intent(out) :: coll
      integer(c_size_t), optional, intent(in) :: block_size
      logical, optional, intent(in) :: direct_io
      character(len=*), optional, intent(in) :: label
      integer, optional, intent(out) :: ierr
    end subroutine river_coll_create

    !> Append nrecords records from records (any array holding at least
    !> nrecords * record_size bytes).
    module subroutine river_coll_append(coll, records, nrecords, ierr)
      type(river_coll), intent(in) :: coll
      type(*), intent(in) :: records(*)
      integer(c_size_t), intent(in) :: nrecords
      integer, optional, intent(out) :: ierr
    end subroutine river_coll_append

    !> Finish a collection being written and rename it into place. Frees
    !> the writer (coll becomes null) whether or not it succeeds; a reader
    !> gives RIVER_EINVAL and stays open.
    module subroutine river_coll_commit(coll, ierr)
      type(river_coll), intent(inout) :: coll
      integer, optional, intent(out) :: ierr
    end subroutine river_coll_commit

    !> Open the collection at path for reading. record_size 0 accepts any
    !> record size (else a different one is RIVER_EFORMAT); a missing file
    !> is RIVER_ENOTFOUND, a damaged one RIVER_ECORRUPT.
    module subroutine river_coll_open(path, record_size, coll, direct_io, ierr)
      character(len=*), intent(in) :: path
      integer(c_size_t), intent(in) :: record_size
      type(river_coll), intent(out) :: coll
      logical, optional, intent(in) :: direct_io
      integer, optional, intent(out) :: ierr
    end subroutine river_coll_open

    !> Close a reader, or abandon a writer (its temporary file is removed).
    !> coll becomes null; a null coll is a no-op.
    module subroutine river_coll_close(coll, ierr)
      type(river_coll), intent(inout) :: coll
      integer, optional, intent(out) :: ierr
    end subroutine river_coll_close

    !> The header's facts (for a writer: what has been appended so far).
    module subroutine river_coll_stat(coll, info, ierr)
      type(river_coll), intent(in) :: coll
      type(river_coll_info), intent(out) :: info
      integer, optional, intent(out) :: ierr
    end subroutine river_coll_stat

    !> Read block `block` (0-based) into buf, bufsize bytes (size(buf) *
    !> c_sizeof(buf(1)); at least records_per_block * record_size, else
    !> RIVER_ENOBUFS), and verify it; nrecords gets its record count.
    module subroutine river_coll_read_block(coll, block, buf, bufsize, &
                                            nrecords, ierr)
      type(river_coll), intent(in) :: coll
      integer(c_int64_t), intent(in) :: block
      type(*), intent(inout) :: buf(*)
      integer(c_size_t), intent(in) :: bufsize
      integer(c_size_t), intent(out) :: nrecords
      integer, optional, intent(out) :: ierr
    end subroutine river_coll_read_block

    !> river_coll_next, borrowed: records points at the next block's
    !> nrecords records (valid until the next call on coll). After the last
    !> block: records null, nrecords 0 and ierr RIVER_EOS (not an error:
    !> without ierr this does not stop).
    module subroutine river_coll_next_ptr(coll, records, nrecords, ierr)
      type(river_coll), intent(in) :: coll
      type(c_ptr), intent(out) :: records
      integer(c_size_t), intent(out) :: nrecords
      integer, optional, intent(out) :: ierr
    end subroutine river_coll_next_ptr

    !> river_coll_next, copied: buf is (re)allocated to the next block's
    !> bytes (nrecords * record_size). After the last block: buf empty,
    !> nrecords 0 and ierr RIVER_EOS (not an error: without ierr this does
    !> not stop).
    module subroutine river_coll_next_bytes(coll, buf, nrecords, ierr)
      type(river_coll), intent(in) :: coll
      integer(c_int8_t), allocatable, intent(inout) :: buf(:)
      integer(c_size_t), intent(out) :: nrecords
      integer, optional, intent(out) :: ierr
    end subroutine river_coll_next_bytes

    !> Restart stream access (river_coll_next) at block 0.
    module subroutine river_coll_rewind(coll, ierr)
      type(river_coll), intent(in) :: coll
      integer, optional, intent(out) :: ierr
    end subroutine river_coll_rewind

    !> Read and verify every block: RIVER_ECORRUPT with bad_block set to the
    !> first damaged block if any is.
    module subroutine river_coll_verify(coll, bad_block, ierr)
      type(river_coll), intent(in) :: coll
      integer(c_int64_t), optional, intent(out) :: bad_block
      integer, optional, intent(out) :: ierr
    end subroutine river_coll_verify

    !> Start writing parallel collection `name` with schema: collective over
    !> comm; rank i writes partition i. Options (defaults as in C's
    !> river_pcoll_opts): root (directory; default $RIVER_ROOT, else
    !> RIVER_PCOLL_DEFAULT_ROOT), disks (pattern with one %d, default
    !> RIVER_PCOLL_DEFAULT_DISKS), ndisks (default one per partition),
    !> replication (copies of each partition, the CLI's --mirror; default
    !> 1), layout (RIVER_LAYOUT_*), block_size (bytes, a multiple of
    !> RIVER_COLL_ALIGN), ordered (keys ascend across partitions, checked
    !> at commit), direct_io.
    module subroutine river_pcoll_create(comm, name, schema, pcoll, root, &
                                         disks, ndisks, replication, layout, &
                                         block_size, ordered, direct_io, ierr)
      type(MPI_Comm), intent(in) :: comm
      character(len=*), intent(in) :: name
      type(river_schema), intent(in) :: schema
      type(river_pcoll), intent(out) :: pcoll
      character(len=*), optional, intent(in) :: root, disks
      integer, optional, intent(in) :: ndisks, replication, layout
      integer(c_size_t), optional, intent(in) :: block_size
      logical, optional, intent(in) :: ordered, direct_io
      integer, optional, intent(out) :: ierr
    end subroutine river_pcoll_create

    !> Append nrecords records (any array of at least nrecords *
    !> record_size bytes) to this rank's partition, every copy.
    module subroutine river_pcoll_write(pcoll, records, nrecords, ierr)
      type(river_pcoll), intent(in) :: pcoll
      type(*), intent(in) :: records(*)
      integer(c_size_t), intent(in) :: nrecords
      integer, optional, intent(out) :: ierr
    end subroutine river_pcoll_write

    !> Make the collection visible and free the writer (pcoll becomes
    !> null). Collective; if any rank failed, none commits and every rank
    !> gets the error. A reader gives RIVER_EINVAL and stays open.
    module subroutine river_pcoll_commit(pcoll, ierr)
      type(river_pcoll), intent(inout) :: pcoll
      integer, optional, intent(out) :: ierr
    end subroutine river_pcoll_commit

    !> Open collection `name` for reading, collective over comm (any number
    !> of ranks). root and disks as for river_pcoll_create (disks: only to
    !> override the recorded pattern). RIVER_ENOTFOUND if there is none.
    module subroutine river_pcoll_open(comm, name, pcoll, root, disks, &
                                       direct_io, ierr)
      type(MPI_Comm), intent(in) :: comm
      character(len=*), intent(in) :: name
      type(river_pcoll), intent(out) :: pcoll
      character(len=*), optional, intent(in) :: root, disks
      logical, optional, intent(in) :: direct_io
      integer, optional, intent(out) :: ierr
    end subroutine river_pcoll_open

    !> Close a reader, or abandon a writer (collective then: its files are
    !> removed). pcoll becomes null; a null pcoll is a no-op.
    module subroutine river_pcoll_close(pcoll, ierr)
      type(river_pcoll), intent(inout) :: pcoll
      integer, optional, intent(out) :: ierr
    end subroutine river_pcoll_close

    !> Facts about the collection (from its metadata).
    module subroutine river_pcoll_info_get(pcoll, info, ierr)
      type(river_pcoll), intent(in) :: pcoll
      type(river_pcoll_info), intent(out) :: info
      integer, optional, intent(out) :: ierr
    end subroutine river_pcoll_info_get

    !> A copy of the collection's schema (unlike C's borrowed pointer: the
    !> caller destroys it).
    module subroutine river_pcoll_schema(pcoll, schema, ierr)
      type(river_pcoll), intent(in) :: pcoll
      type(river_schema), intent(out) :: schema
      integer, optional, intent(out) :: ierr
    end subroutine river_pcoll_schema

    !> Partition p's (0-based) entry in the partition table (reader).
    module subroutine river_pcoll_partition(pcoll, p, part, ierr)
      type(river_pcoll), intent(in) :: pcoll
      integer, intent(in) :: p
      type(river_pcoll_part), intent(out) :: part
      integer, optional, intent(out) :: ierr
    end subroutine river_pcoll_partition

    !> The directory of disk d (0-based) under the collection's root.
    module subroutine river_pcoll_disk_path(pcoll, d, path, ierr)
      type(river_pcoll), intent(in) :: pcoll
      integer, intent(in) :: d
      character(len=:), allocatable, intent(out) :: path
      integer, optional, intent(out) :: ierr
    end subroutine river_pcoll_disk_path

    !> Read block `block` of partition p (both 0-based) into buf, bufsize
    !> bytes (size(buf) * c_sizeof(buf(1)); at least records_per_block *
    !> record_size), verified; a bad copy is covered by a mirror. nrecords
    !> gets the block's record count.
    module subroutine river_pcoll_read_block(pcoll, p, block, buf, bufsize, &
                                             nrecords, ierr)
      type(river_pcoll), intent(in) :: pcoll
      integer, intent(in) :: p
      integer(c_int64_t), intent(in) :: block
      type(*), intent(inout) :: buf(*)
      integer(c_size_t), intent(in) :: bufsize
      integer(c_size_t), intent(out) :: nrecords
      integer, optional, intent(out) :: ierr
    end subroutine river_pcoll_read_block

    !> The records per block and the block count of partition p.
    module subroutine river_pcoll_blocks(pcoll, p, records_per_block, nblocks, &
                                         ierr)
      type(river_pcoll), intent(in) :: pcoll
      integer, intent(in) :: p
      integer(c_size_t), intent(out) :: records_per_block
      integer(c_int64_t), intent(out) :: nblocks
      integer, optional, intent(out) :: ierr
    end subroutine river_pcoll_blocks

    !> Check copy c of partition p (both 0-based) against the metadata and
    !> verify every block. On failure bad_block is the first damaged block
    !> (-1: the file as a whole is bad).
    module subroutine river_pcoll_verify_copy(pcoll, p, c, bad_block, ierr)
      type(river_pcoll), intent(in) :: pcoll
      integer, intent(in) :: p, c
      integer(c_int64_t), optional, intent(out) :: bad_block
      integer, optional, intent(out) :: ierr
    end subroutine river_pcoll_verify_copy

    !> Remove collection `name` (metadata, then data files). Not
    !> collective: call on one rank. RIVER_ENOTFOUND if there is none.
    module subroutine river_pcoll_remove(name, root, disks, ierr)
      character(len=*), intent(in) :: name
      character(len=*), optional, intent(in) :: root, disks
      integer, optional, intent(out) :: ierr
    end subroutine river_pcoll_remove

    !> Check a collection name: RIVER_EINVAL (with a logged reason) unless
    !> it is 1..RIVER_PCOLL_NAME_MAX of letters, digits, '.', '_', '-', not
    !> starting with '.' and without "..".
    module subroutine river_pcoll_check_name(name, ierr)
      character(len=*), intent(in) :: name
      integer, optional, intent(out) :: ierr
    end subroutine river_pcoll_check_name

    !> Fill buf (at least count * RIVER_GENSORT_RECORD_SIZE bytes) with
    !> gensort-layout records for rows first .. first+count-1. flags: 0 or
    !> a sum of RIVER_GENSORT_ASCII and RIVER_GENSORT_SKEW.
    module subroutine river_gensort_fill(first, count, flags, seed, buf, ierr)
      integer(c_int64_t), intent(in) :: first, seed
      integer(c_size_t), intent(in) :: count
      integer, intent(in) :: flags
      type(*), intent(inout) :: buf(*)
      integer, optional, intent(out) :: ierr
    end subroutine river_gensort_fill

    !> Extend the CRC32C in crc with len bytes of buf (start from crc = 0;
    !> C's uint32_t, so values of 2**31 and above read negative).
    module subroutine river_crc32c(buf, len, crc, ierr)
      type(*), intent(in) :: buf(*)
      integer(c_size_t), intent(in) :: len
      integer(c_int32_t), intent(inout) :: crc
      integer, optional, intent(out) :: ierr
    end subroutine river_crc32c
  end interface

  ! ---------------------------------------------------- distributed queues
  ! river/dq.h: in river_dq.F90.
  interface
    !> Create a queue over comm (collective). role: RIVER_DQ_PRODUCER,
    !> RIVER_DQ_CONSUMER, both (ior) or 0. record_size in bytes (> 0, the
    !> same on every rank, e.g. c_sizeof(one_record)). Options (defaults as
    !> in C's river_dq_opts, the same on every rank): policy (RIVER_DQ_*,
    !> default RIVER_DQ_PUSH), credits (default RIVER_DQ_DEFAULT_CREDITS),
    !> message_size (bytes, default RIVER_DQ_DEFAULT_MESSAGE_SIZE), seed
    !> (for PUSH's random choices), and for RIVER_DQ_EXCHANGE partition (a
    !> bind(C) function with interface river_dq_partition_fn) and
    !> partition_ctx (passed to it).
    module subroutine river_dq_create(comm, role, record_size, q, policy, &
                                      credits, message_size, seed, partition, &
                                      partition_ctx, ierr)
      type(MPI_Comm), intent(in) :: comm
      integer, intent(in) :: role
      integer(c_size_t), intent(in) :: record_size
      type(river_dq), intent(out) :: q
      integer, optional, intent(in) :: policy, credits
      integer(c_size_t), optional, intent(in) :: message_size
      integer(c_int64_t), optional, intent(in) :: seed
      procedure(river_dq_partition_fn), optional :: partition
      type(c_ptr), optional, intent(in) :: partition_ctx
      integer, optional, intent(out) :: ierr
    end subroutine river_dq_create

    !> Put nrecords records from records (any array of at least nrecords *
    !> record_size bytes); blocks, without spinning, while the message
    !> being filled has nowhere to go.
    module subroutine river_dq_put(q, records, nrecords, ierr)
      type(river_dq), intent(in) :: q
      type(*), intent(in) :: records(*)
      integer(c_size_t), intent(in) :: nrecords
      integer, optional, intent(out) :: ierr
    end subroutine river_dq_put

    !> Like river_dq_put, but ierr RIVER_EAGAIN (none taken) instead of
    !> blocking; that is a status, not an error: without ierr it does not
    !> stop (so, without ierr, whether the records went cannot be told).
    !> RIVER_ENOBUFS: too many records for one try, put fewer.
    module subroutine river_dq_try_put(q, records, nrecords, ierr)
      type(river_dq), intent(in) :: q
      type(*), intent(in) :: records(*)
      integer(c_size_t), intent(in) :: nrecords
      integer, optional, intent(out) :: ierr
    end subroutine river_dq_try_put

    !> Zero-copy put: buf points at room for max records in the message
    !> being filled (c_f_pointer makes it a Fortran array); write records
    !> there, then river_dq_commit(q, n) puts the first n. See dq.h.
    module subroutine river_dq_reserve(q, buf, max, ierr)
      type(river_dq), intent(in) :: q
      type(c_ptr), intent(out) :: buf
      integer(c_size_t), intent(out) :: max
      integer, optional, intent(out) :: ierr
    end subroutine river_dq_reserve

    !> Put the first n records written at river_dq_reserve's buf (0 <= n
    !> <= max), as river_dq_put would, without copying them.
    module subroutine river_dq_commit(q, n, ierr)
      type(river_dq), intent(in) :: q
      integer(c_size_t), intent(in) :: n
      integer, optional, intent(out) :: ierr
    end subroutine river_dq_commit

    !> Send what is buffered and end this producer's stream.
    module subroutine river_dq_close(q, ierr)
      type(river_dq), intent(in) :: q
      integer, optional, intent(out) :: ierr
    end subroutine river_dq_close

    !> river_dq_get, borrowed: records points at the next message's
    !> nrecords records (c_f_pointer makes them a Fortran array), valid
    !> until river_dq_release or the next get; from (optional) gets the
    !> producer index. After the end of every stream: records null,
    !> nrecords 0, ierr RIVER_EOS (not an error: without ierr this does
    !> not stop).
    module subroutine river_dq_get_ptr(q, records, nrecords, from, ierr)
      type(river_dq), intent(in) :: q
      type(c_ptr), intent(out) :: records
      integer(c_size_t), intent(out) :: nrecords
      integer, optional, intent(out) :: from
      integer, optional, intent(out) :: ierr
    end subroutine river_dq_get_ptr

    !> river_dq_get, copied: buf is (re)allocated to the next message's
    !> bytes (nrecords * record_size). The message itself stays held (its
    !> credit not returned) until river_dq_release or the next get. At the
    !> end: buf empty, nrecords 0, ierr RIVER_EOS (not an error).
    module subroutine river_dq_get_bytes(q, buf, nrecords, from, ierr)
      type(river_dq), intent(in) :: q
      integer(c_int8_t), allocatable, intent(inout) :: buf(:)
      integer(c_size_t), intent(out) :: nrecords
      integer, optional, intent(out) :: from
      integer, optional, intent(out) :: ierr
    end subroutine river_dq_get_bytes

    !> river_dq_try_get, borrowed: as river_dq_get, but ierr RIVER_EAGAIN
    !> (records null, nrecords 0) if no message is ready; EAGAIN and EOS
    !> are statuses, not errors: without ierr this does not stop.
    module subroutine river_dq_try_get_ptr(q, records, nrecords, from, ierr)
      type(river_dq), intent(in) :: q
      type(c_ptr), intent(out) :: records
      integer(c_size_t), intent(out) :: nrecords
      integer, optional, intent(out) :: from
      integer, optional, intent(out) :: ierr
    end subroutine river_dq_try_get_ptr

    !> river_dq_try_get, copied (see river_dq_get_bytes); RIVER_EAGAIN
    !> leaves buf empty.
    module subroutine river_dq_try_get_bytes(q, buf, nrecords, from, ierr)
      type(river_dq), intent(in) :: q
      integer(c_int8_t), allocatable, intent(inout) :: buf(:)
      integer(c_size_t), intent(out) :: nrecords
      integer, optional, intent(out) :: from
      integer, optional, intent(out) :: ierr
    end subroutine river_dq_try_get_bytes

    !> Give back the message from the last get (no-op if none is held).
    module subroutine river_dq_release(q, ierr)
      type(river_dq), intent(in) :: q
      integer, optional, intent(out) :: ierr
    end subroutine river_dq_release

    !> RIVER_DQ_PULL, producer: end the current unit (the records put since
    !> the last end_unit or create), waiting without spinning for a
    !> consumer to claim it and for that consumer's credit; no records
    !> since the last end_unit is a no-op. RIVER_EINVAL on a queue of
    !> another policy or a rank that is not a producer.
    module subroutine river_dq_end_unit(q, ierr)
      type(river_dq), intent(in) :: q
      integer, optional, intent(out) :: ierr
    end subroutine river_dq_end_unit

    !> RIVER_DQ_PULL, consumer: the unit of the message from the last
    !> successful get: unit is its global id, ishft(producer index,
    !> RIVER_DQ_UNIT_SHIFT) + its number within that producer; first and
    !> last tell whether the message is the unit's first or last.
    !> RIVER_ESTATE before the first message.
    module subroutine river_dq_unit(q, unit, first, last, ierr)
      type(river_dq), intent(in) :: q
      integer(c_int64_t), intent(out) :: unit
      logical, optional, intent(out) :: first, last
      integer, optional, intent(out) :: ierr
    end subroutine river_dq_unit

    !> This rank's counters so far.
    module subroutine river_dq_stats_get(q, stats, ierr)
      type(river_dq), intent(in) :: q
      type(river_dq_stats), intent(out) :: stats
      integer, optional, intent(out) :: ierr
    end subroutine river_dq_stats_get

    !> Free the queue (collective over its communicator); q becomes null
    !> whatever the result. RIVER_ESTATE if a producer had not closed or a
    !> consumer had not seen RIVER_EOS (on every rank alike).
    module subroutine river_dq_destroy(q, ierr)
      type(river_dq), intent(inout) :: q
      integer, optional, intent(out) :: ierr
    end subroutine river_dq_destroy
  end interface

  ! ------------------------------------------------ graduated declustering
  ! river/gd.h: in river_gd.F90.
  interface
    !> Read parallel collection pc (a reader from river_pcoll_open, open on
    !> every rank of comm, and left open until river_gd_close) with
    !> graduated declustering: collective over comm; every rank passes the
    !> same options. Options (defaults as RIVER_GD_OPTS_INIT):
    !>   policy        RIVER_GD_BALANCED (default), RIVER_GD_MIRROR_NOGD or
    !>                 RIVER_GD_NOMIRROR
    !>   mode          RIVER_GD_UNORDERED (default: blocks as they arrive)
    !>                 or RIVER_GD_STREAM (each rank's blocks in write
    !>                 order: for a RIVER_LAYOUT_PARTITIONED collection its
    !>                 partitions in ascending order, each whole; for
    !>                 RIVER_LAYOUT_INTERLEAVED stripe by stripe, block b of
    !>                 each of its partitions, then block b + 1)
    !>   outstanding   requests a client keeps at each mirror (default, or
    !>                 0: RIVER_GD_DEFAULT_OUTSTANDING)
    !>   window        stream mode: blocks past the next one that may be
    !>                 asked for (default, or 0: 8 x outstanding x replication)
    !>   disk_ranks    (0:ndisks-1) the rank serving each disk (default: disk
    !>                 d on rank mod(d, size)); a shorter array is RIVER_EINVAL
    !>   client_ranks  (0:npartitions-1) the rank reading each partition
    !>                 (default: partition p on rank mod(p, size)); likewise
    !>   disk_rate     emulated bytes/s per disk (default 0: real speed)
    !>   seek_seconds  emulated seek when a disk switches streams (needs
    !>                 disk_rate; default 0)
    !>   perturb       factors on disk_rate ("disk:..."), borrowed: keep it
    !>                 until river_gd_close
    !> Bad options are RIVER_EINVAL on every rank.
    module subroutine river_gd_open(comm, pc, gd, policy, mode, outstanding, &
                                    window, disk_ranks, client_ranks, &
                                    disk_rate, seek_seconds, perturb, ierr)
      type(MPI_Comm), intent(in) :: comm
      type(river_pcoll), intent(in) :: pc
      type(river_gd), intent(out) :: gd
      integer, optional, intent(in) :: policy, mode, outstanding, window
      integer, optional, intent(in) :: disk_ranks(:), client_ranks(:)
      real(c_double), optional, intent(in) :: disk_rate, seek_seconds
      type(river_perturb), optional, intent(in) :: perturb
      integer, optional, intent(out) :: ierr
    end subroutine river_gd_open

    !> river_gd_next, borrowed: records points at nrecords records of
    !> partition `partition`, block `block` (both 0-based, as in C; block is
    !> the block's index within its partition), valid until the next
    !> river_gd_next or river_gd_close (c_f_pointer makes them a Fortran
    !> array). A rank serving disks keeps serving inside this call until
    !> every client is done: call it on every rank until it gives RIVER_EOS
    !> (records null, nrecords 0; a status, not an error: without ierr this
    !> does not stop) or an error, then river_gd_close.
    module subroutine river_gd_next_ptr(gd, records, nrecords, partition, &
                                        block, ierr)
      type(river_gd), intent(in) :: gd
      type(c_ptr), intent(out) :: records
      integer(c_size_t), intent(out) :: nrecords
      integer, optional, intent(out) :: partition
      integer(c_int64_t), optional, intent(out) :: block
      integer, optional, intent(out) :: ierr
    end subroutine river_gd_next_ptr

    !> river_gd_next, copied: buf is (re)allocated to the block's bytes
    !> (nrecords * record_size; transfer() turns them into records);
    !> partition and block as for the borrowed variant. At the end: buf
    !> empty, nrecords 0, ierr RIVER_EOS (not an error).
    module subroutine river_gd_next_bytes(gd, buf, nrecords, partition, block, &
                                          ierr)
      type(river_gd), intent(in) :: gd
      integer(c_int8_t), allocatable, intent(inout) :: buf(:)
      integer(c_size_t), intent(out) :: nrecords
      integer, optional, intent(out) :: partition
      integer(c_int64_t), optional, intent(out) :: block
      integer, optional, intent(out) :: ierr
    end subroutine river_gd_next_bytes

    !> This rank's counters so far.
    module subroutine river_gd_stats_get(gd, stats, ierr)
      type(river_gd), intent(in) :: gd
      type(river_gd_stats), intent(out) :: stats
      integer, optional, intent(out) :: ierr
    end subroutine river_gd_stats_get

    !> Finish the read (collective over river_gd_open's comm): the first
    !> error any rank met, the same on every rank. gd becomes null
    !> whatever the result; a null gd is a no-op (and then not collective).
    !> Call river_gd_next until it gives something other than
    !> RIVER_SUCCESS first.
    module subroutine river_gd_close(gd, ierr)
      type(river_gd), intent(inout) :: gd
      integer, optional, intent(out) :: ierr
    end subroutine river_gd_close

    !> The fluid ideal of a GD read of n partitions on n disks with chained
    !> replication r, disk d (0-based) delivering rates(d+1) bytes/s: the
    !> rate per_client every client gets and the total n * per_client.
    !> RIVER_EINVAL for n < 1, r outside 1..n, a negative rate or fewer
    !> than n rates.
    module subroutine river_gd_fluid_ideal(rates, n, r, per_client, total, ierr)
      real(c_double), intent(in) :: rates(:)
      integer, intent(in) :: n, r
      real(c_double), optional, intent(out) :: per_client, total
      integer, optional, intent(out) :: ierr
    end subroutine river_gd_fluid_ideal
  end interface

  ! ------------------------------------------------------------- emulation
  ! river/throttle.h (token buckets, perturbation specs, the CPU hog): in
  ! river_emul.F90.
  interface
    !> A token bucket of rate bytes/s (> 0) with a burst of burst bytes
    !> (default, or 0: rate/20, at least 64 KiB); it starts full.
    module subroutine river_throttle_create(rate, t, burst, ierr)
      real(c_double), intent(in) :: rate
      type(river_throttle), intent(out) :: t
      real(c_double), optional, intent(in) :: burst
      integer, optional, intent(out) :: ierr
    end subroutine river_throttle_create

    !> Free t and make it null; a null t is left alone.
    module subroutine river_throttle_destroy(t)
      type(river_throttle), intent(inout) :: t
    end subroutine river_throttle_destroy

    !> Account for bytes of work: returns once the bucket has had the
    !> tokens (sleeping, never spinning).
    module subroutine river_throttle_consume(t, bytes, ierr)
      type(river_throttle), intent(in) :: t
      integer(c_size_t), intent(in) :: bytes
      integer, optional, intent(out) :: ierr
    end subroutine river_throttle_consume

    !> Multiply the nominal rate by factor (> 0) from now on.
    module subroutine river_throttle_set_factor(t, factor, ierr)
      type(river_throttle), intent(in) :: t
      real(c_double), intent(in) :: factor
      integer, optional, intent(out) :: ierr
    end subroutine river_throttle_set_factor

    !> The effective rate (nominal x factor), bytes/s.
    module subroutine river_throttle_rate(t, rate, ierr)
      type(river_throttle), intent(in) :: t
      real(c_double), intent(out) :: rate
      integer, optional, intent(out) :: ierr
    end subroutine river_throttle_rate

    !> Seconds river_throttle_consume has spent sleeping so far.
    module subroutine river_throttle_slept(t, seconds, ierr)
      type(river_throttle), intent(in) :: t
      real(c_double), intent(out) :: seconds
      integer, optional, intent(out) :: ierr
    end subroutine river_throttle_slept

    !> Parse a perturbation spec ("KIND:INDICES=FACTOR[@TIME][;...]", see
    !> river/throttle.h); bad text is RIVER_EFORMAT (with a logged reason).
    module subroutine river_perturb_parse(spec, p, ierr)
      character(len=*), intent(in) :: spec
      type(river_perturb), intent(out) :: p
      integer, optional, intent(out) :: ierr
    end subroutine river_perturb_parse

    !> Free p and make it null; a null p is left alone.
    module subroutine river_perturb_destroy(p)
      type(river_perturb), intent(inout) :: p
    end subroutine river_perturb_destroy

    !> The factor for (kind, index) t seconds into the run (kind:
    !> RIVER_PERTURB_DISK or RIVER_PERTURB_CPU): the last clause naming
    !> index whose start is <= t, or 1.
    module subroutine river_perturb_factor(p, kind, index, t, factor, ierr)
      type(river_perturb), intent(in) :: p
      integer, intent(in) :: kind, index
      real(c_double), intent(in) :: t
      real(c_double), intent(out) :: factor
      integer, optional, intent(out) :: ierr
    end subroutine river_perturb_factor

    !> The number of distinct indices of kind with a factor /= 1 at any time.
    module subroutine river_perturb_count(p, kind, k, ierr)
      type(river_perturb), intent(in) :: p
      integer, intent(in) :: kind
      integer, intent(out) :: k
      integer, optional, intent(out) :: ierr
    end subroutine river_perturb_count

    !> The largest index of kind named by any clause, or -1 if none.
    module subroutine river_perturb_max_index(p, kind, max_index, ierr)
      type(river_perturb), intent(in) :: p
      integer, intent(in) :: kind
      integer, intent(out) :: max_index
      integer, optional, intent(out) :: ierr
    end subroutine river_perturb_max_index

    !> Start a thread stealing fraction (0 < fraction < 1) of this
    !> process's core (RIVER_ETOPO if hwloc cannot bind it).
    module subroutine river_cpu_hog_start(fraction, h, ierr)
      real(c_double), intent(in) :: fraction
      type(river_cpu_hog), intent(out) :: h
      integer, optional, intent(out) :: ierr
    end subroutine river_cpu_hog_start

    !> Stop and join the thread; h becomes null (a null h is a no-op).
    module subroutine river_cpu_hog_stop(h, ierr)
      type(river_cpu_hog), intent(inout) :: h
      integer, optional, intent(out) :: ierr
    end subroutine river_cpu_hog_stop
  end interface

end module river
