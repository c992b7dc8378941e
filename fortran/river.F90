! river.F90 - module river: River's Fortran 2008 API over iso_c_binding.
!
! Every procedure that can fail takes `integer, optional, intent(out) ::
! ierr` last. With ierr present it receives RIVER_SUCCESS or a negative
! RIVER_E* code; without it, a failure stops the program (error stop)
! with the message. Strings coming back from River are allocatable
! character(len=:) values sized to fit. Private bind(C) interfaces end in
! _c. Constants come from river_constants.inc, generated from river.h.
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

  ! C's river_coll_opts and river_pcoll_opts, built from optional
  ! arguments; the strings point into NUL-terminated copies that live for
  ! the call.
  type, bind(C) :: coll_opts_c
    integer(c_size_t) :: block_size = 0
    integer(c_int) :: direct_io = 0
    type(c_ptr) :: label = c_null_ptr
  end type coll_opts_c

  type, bind(C) :: pcoll_opts_c
    type(c_ptr) :: root = c_null_ptr
    type(c_ptr) :: disks = c_null_ptr
    integer(c_int) :: ndisks = 0
    integer(c_int) :: replication = 0
    integer(c_int) :: layout = RIVER_LAYOUT_PARTITIONED
    integer(c_size_t) :: block_size = 0
    integer(c_int) :: ordered = 0
    integer(c_int) :: direct_io = 0
  end type pcoll_opts_c

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

  ! C's river_dq_opts, built from river_dq_create's optional arguments.
  type, bind(C) :: dq_opts_c
    integer(c_int) :: policy = RIVER_DQ_PUSH
    integer(c_int) :: credits = 0
    integer(c_size_t) :: message_size = 0
    integer(c_int64_t) :: seed = 0
    type(c_funptr) :: partition = c_null_funptr
    type(c_ptr) :: partition_ctx = c_null_ptr
  end type dq_opts_c

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

  ! C's river_gd_opts, built from river_gd_open's optional arguments; the
  ! defaults are RIVER_GD_OPTS_INIT's. The rank arrays point into copies
  ! that live for the call (C copies them); perturb is borrowed until
  ! river_gd_close.
  type, bind(C) :: gd_opts_c
    integer(c_int) :: policy = RIVER_GD_BALANCED
    integer(c_int) :: mode = RIVER_GD_UNORDERED
    integer(c_int) :: outstanding = 0
    integer(c_int) :: window = 0
    type(c_ptr) :: disk_ranks = c_null_ptr
    type(c_ptr) :: client_ranks = c_null_ptr
    real(c_double) :: disk_rate = 0.0_c_double
    real(c_double) :: seek_seconds = 0.0_c_double
    type(c_ptr) :: perturb = c_null_ptr
  end type gd_opts_c

  ! Compile-time check that the bind(C) types above are the size of their
  ! C structs (sizes from river_gen_constants): a mismatch fails the build
  ! here with a division by zero.
  integer, parameter :: layout_ok = 1 / merge(1, 0, &
      c_sizeof(river_coll_info()) == RIVER__SIZEOF_COLL_INFO .and. &
      c_sizeof(river_pcoll_info()) == RIVER__SIZEOF_PCOLL_INFO .and. &
      c_sizeof(river_pcoll_part()) == RIVER__SIZEOF_PCOLL_PART .and. &
      c_sizeof(coll_opts_c()) == RIVER__SIZEOF_COLL_OPTS .and. &
      c_sizeof(pcoll_opts_c()) == RIVER__SIZEOF_PCOLL_OPTS .and. &
      c_sizeof(dq_opts_c()) == RIVER__SIZEOF_DQ_OPTS .and. &
      c_sizeof(river_dq_stats()) == RIVER__SIZEOF_DQ_STATS .and. &
      c_sizeof(gd_opts_c()) == RIVER__SIZEOF_GD_OPTS .and. &
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

  interface
    function river_init_c(argc, argv) bind(C, name='river_init')
      import :: c_int, c_ptr
      type(c_ptr), value :: argc, argv
      integer(c_int) :: river_init_c
    end function river_init_c
    function river_finalize_c() bind(C, name='river_finalize')
      import :: c_int
      integer(c_int) :: river_finalize_c
    end function river_finalize_c
    function river_initialized_c(flag) bind(C, name='river_initialized')
      import :: c_int
      integer(c_int), intent(out) :: flag
      integer(c_int) :: river_initialized_c
    end function river_initialized_c
    function river_get_version_c(major, minor, release) &
        bind(C, name='river_get_version')
      import :: c_int
      integer(c_int), intent(out) :: major, minor, release
      integer(c_int) :: river_get_version_c
    end function river_get_version_c
    function river_build_info_c(buf, len) bind(C, name='river_build_info')
      import :: c_int, c_char, c_size_t
      character(kind=c_char), intent(out) :: buf(*)
      integer(c_size_t), intent(inout) :: len
      integer(c_int) :: river_build_info_c
    end function river_build_info_c
    function river_topo_describe_c(buf, len) &
        bind(C, name='river_topo_describe')
      import :: c_int, c_char, c_size_t
      character(kind=c_char), intent(out) :: buf(*)
      integer(c_size_t), intent(inout) :: len
      integer(c_int) :: river_topo_describe_c
    end function river_topo_describe_c
    function river_strerror_c(err) bind(C, name='river_strerror')
      import :: c_int, c_ptr
      integer(c_int), value :: err
      type(c_ptr) :: river_strerror_c
    end function river_strerror_c
    function river_err_name_c(err) bind(C, name='river_err_name')
      import :: c_int, c_ptr
      integer(c_int), value :: err
      type(c_ptr) :: river_err_name_c
    end function river_err_name_c
    function river_log_c(level, msg) bind(C, name='river__f_log')
      import :: c_int, c_char
      integer(c_int), value :: level
      character(kind=c_char), intent(in) :: msg(*)
      integer(c_int) :: river_log_c
    end function river_log_c
    function river_log_set_level_c(level) bind(C, name='river_log_set_level')
      import :: c_int
      integer(c_int), value :: level
      integer(c_int) :: river_log_set_level_c
    end function river_log_set_level_c
    function river_log_get_level_c(level) bind(C, name='river_log_get_level')
      import :: c_int
      integer(c_int), intent(out) :: level
      integer(c_int) :: river_log_get_level_c
    end function river_log_get_level_c
    function river_log_parse_level_c(name, level) &
        bind(C, name='river_log_parse_level')
      import :: c_int, c_char
      character(kind=c_char), intent(in) :: name(*)
      integer(c_int), intent(out) :: level
      integer(c_int) :: river_log_parse_level_c
    end function river_log_parse_level_c
    function river_log_level_name_c(level) bind(C, name='river_log_level_name')
      import :: c_int, c_ptr
      integer(c_int), value :: level
      type(c_ptr) :: river_log_level_name_c
    end function river_log_level_name_c
    function river_log_set_handler_c(fn, ctx) &
        bind(C, name='river_log_set_handler')
      import :: c_int, c_funptr, c_ptr
      type(c_funptr), value :: fn
      type(c_ptr), value :: ctx
      integer(c_int) :: river_log_set_handler_c
    end function river_log_set_handler_c
    function river_wtime_c() bind(C, name='river_wtime')
      import :: c_double
      real(c_double) :: river_wtime_c
    end function river_wtime_c
    function river_timer_reset_c(t) bind(C, name='river_timer_reset')
      import :: c_int, river_timer
      type(river_timer), intent(inout) :: t
      integer(c_int) :: river_timer_reset_c
    end function river_timer_reset_c
    function river_timer_start_c(t) bind(C, name='river_timer_start')
      import :: c_int, river_timer
      type(river_timer), intent(inout) :: t
      integer(c_int) :: river_timer_start_c
    end function river_timer_start_c
    function river_timer_stop_c(t) bind(C, name='river_timer_stop')
      import :: c_int, river_timer
      type(river_timer), intent(inout) :: t
      integer(c_int) :: river_timer_stop_c
    end function river_timer_stop_c
    function river_timer_elapsed_c(t, seconds) &
        bind(C, name='river_timer_elapsed')
      import :: c_int, c_double, river_timer
      type(river_timer), intent(in) :: t
      real(c_double), intent(out) :: seconds
      integer(c_int) :: river_timer_elapsed_c
    end function river_timer_elapsed_c
    ! river/schema.h
    function river_schema_parse_c(text, out) bind(C, name='river_schema_parse')
      import :: c_int, c_char, c_ptr
      character(kind=c_char), intent(in) :: text(*)
      type(c_ptr), intent(out) :: out
      integer(c_int) :: river_schema_parse_c
    end function river_schema_parse_c
    function river_schema_create_default_c(out) &
        bind(C, name='river_schema_create_default')
      import :: c_int, c_ptr
      type(c_ptr), intent(out) :: out
      integer(c_int) :: river_schema_create_default_c
    end function river_schema_create_default_c
    function river_schema_clone_c(s, out) bind(C, name='river_schema_clone')
      import :: c_int, c_ptr
      type(c_ptr), value :: s
      type(c_ptr), intent(out) :: out
      integer(c_int) :: river_schema_clone_c
    end function river_schema_clone_c
    subroutine river_schema_destroy_c(s) bind(C, name='river_schema_destroy')
      import :: c_ptr
      type(c_ptr), value :: s
    end subroutine river_schema_destroy_c
    function river_schema_record_size_c(s, size) &
        bind(C, name='river_schema_record_size')
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: s
      integer(c_size_t), intent(out) :: size
      integer(c_int) :: river_schema_record_size_c
    end function river_schema_record_size_c
    function river_schema_nfields_c(s, n) bind(C, name='river_schema_nfields')
      import :: c_int, c_ptr
      type(c_ptr), value :: s
      integer(c_int), intent(out) :: n
      integer(c_int) :: river_schema_nfields_c
    end function river_schema_nfields_c
    function river_schema_field_c(s, i, name, type, count, offset) &
        bind(C, name='river_schema_field')
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: s
      integer(c_int), value :: i
      type(c_ptr), intent(out) :: name
      integer(c_int), intent(out) :: type
      integer(c_size_t), intent(out) :: count, offset
      integer(c_int) :: river_schema_field_c
    end function river_schema_field_c
    function river_schema_key_c(s, field, offset, size) &
        bind(C, name='river_schema_key')
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: s
      integer(c_int), intent(out) :: field
      integer(c_size_t), intent(out) :: offset, size
      integer(c_int) :: river_schema_key_c
    end function river_schema_key_c
    function river_schema_find_c(s, name, field) &
        bind(C, name='river_schema_find')
      import :: c_int, c_ptr, c_char
      type(c_ptr), value :: s
      character(kind=c_char), intent(in) :: name(*)
      integer(c_int), intent(out) :: field
      integer(c_int) :: river_schema_find_c
    end function river_schema_find_c
    function river_schema_format_c(s, buf, len) &
        bind(C, name='river_schema_format')
      import :: c_int, c_ptr, c_char, c_size_t
      type(c_ptr), value :: s
      character(kind=c_char), intent(out) :: buf(*)
      integer(c_size_t), intent(inout) :: len
      integer(c_int) :: river_schema_format_c
    end function river_schema_format_c
    function river_schema_equal_c(a, b, equal) &
        bind(C, name='river_schema_equal')
      import :: c_int, c_ptr
      type(c_ptr), value :: a, b
      integer(c_int), intent(out) :: equal
      integer(c_int) :: river_schema_equal_c
    end function river_schema_equal_c
    function river_schema_compare_c(s, a, b, cmp) &
        bind(C, name='river_schema_compare')
      import :: c_int, c_ptr
      type(c_ptr), value :: s
      type(*), intent(in) :: a, b
      integer(c_int), intent(out) :: cmp
      integer(c_int) :: river_schema_compare_c
    end function river_schema_compare_c
    function river_type_name_c(type) bind(C, name='river_type_name')
      import :: c_int, c_ptr
      integer(c_int), value :: type
      type(c_ptr) :: river_type_name_c
    end function river_type_name_c
    ! river/collection.h
    function river_coll_create_c(path, record_size, opts, out) &
        bind(C, name='river_coll_create')
      import :: c_int, c_char, c_size_t, c_ptr, coll_opts_c
      character(kind=c_char), intent(in) :: path(*)
      integer(c_size_t), value :: record_size
      type(coll_opts_c), intent(in) :: opts
      type(c_ptr), intent(out) :: out
      integer(c_int) :: river_coll_create_c
    end function river_coll_create_c
    function river_coll_append_c(c, records, nrecords) &
        bind(C, name='river_coll_append')
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: c
      type(*), intent(in) :: records(*)
      integer(c_size_t), value :: nrecords
      integer(c_int) :: river_coll_append_c
    end function river_coll_append_c
    function river_coll_commit_c(c) bind(C, name='river_coll_commit')
      import :: c_int, c_ptr
      type(c_ptr), value :: c
      integer(c_int) :: river_coll_commit_c
    end function river_coll_commit_c
    function river_coll_open_c(path, record_size, opts, out) &
        bind(C, name='river_coll_open')
      import :: c_int, c_char, c_size_t, c_ptr, coll_opts_c
      character(kind=c_char), intent(in) :: path(*)
      integer(c_size_t), value :: record_size
      type(coll_opts_c), intent(in) :: opts
      type(c_ptr), intent(out) :: out
      integer(c_int) :: river_coll_open_c
    end function river_coll_open_c
    function river_coll_close_c(c) bind(C, name='river_coll_close')
      import :: c_int, c_ptr
      type(c_ptr), value :: c
      integer(c_int) :: river_coll_close_c
    end function river_coll_close_c
    function river_coll_stat_c(c, info) bind(C, name='river_coll_stat')
      import :: c_int, c_ptr, river_coll_info
      type(c_ptr), value :: c
      type(river_coll_info), intent(out) :: info
      integer(c_int) :: river_coll_stat_c
    end function river_coll_stat_c
    function river_coll_read_block_c(c, block, buf, bufsize, nrecords) &
        bind(C, name='river_coll_read_block')
      import :: c_int, c_ptr, c_int64_t, c_size_t
      type(c_ptr), value :: c
      integer(c_int64_t), value :: block
      type(*), intent(inout) :: buf(*)
      integer(c_size_t), value :: bufsize
      integer(c_size_t), intent(out) :: nrecords
      integer(c_int) :: river_coll_read_block_c
    end function river_coll_read_block_c
    function river_coll_next_c(c, records, nrecords) &
        bind(C, name='river_coll_next')
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: c
      type(c_ptr), intent(out) :: records
      integer(c_size_t), intent(out) :: nrecords
      integer(c_int) :: river_coll_next_c
    end function river_coll_next_c
    function river_coll_rewind_c(c) bind(C, name='river_coll_rewind')
      import :: c_int, c_ptr
      type(c_ptr), value :: c
      integer(c_int) :: river_coll_rewind_c
    end function river_coll_rewind_c
    function river_coll_verify_c(c, bad_block) bind(C, name='river_coll_verify')
      import :: c_int, c_ptr, c_int64_t
      type(c_ptr), value :: c
      integer(c_int64_t), intent(out) :: bad_block
      integer(c_int) :: river_coll_verify_c
    end function river_coll_verify_c
    ! river/pcoll.h (create and open through shims: comm is an MPI_Fint)
    function river_pcoll_create_c(comm, name, schema, opts, out) &
        bind(C, name='river__f_pcoll_create')
      import :: c_int, c_char, c_ptr, pcoll_opts_c
      integer(c_int), value :: comm
      character(kind=c_char), intent(in) :: name(*)
      type(c_ptr), value :: schema
      type(pcoll_opts_c), intent(in) :: opts
      type(c_ptr), intent(out) :: out
      integer(c_int) :: river_pcoll_create_c
    end function river_pcoll_create_c
    function river_pcoll_write_c(pc, records, nrecords) &
        bind(C, name='river_pcoll_write')
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: pc
      type(*), intent(in) :: records(*)
      integer(c_size_t), value :: nrecords
      integer(c_int) :: river_pcoll_write_c
    end function river_pcoll_write_c
    function river_pcoll_commit_c(pc) bind(C, name='river_pcoll_commit')
      import :: c_int, c_ptr
      type(c_ptr), value :: pc
      integer(c_int) :: river_pcoll_commit_c
    end function river_pcoll_commit_c
    function river_pcoll_open_c(comm, name, opts, out) &
        bind(C, name='river__f_pcoll_open')
      import :: c_int, c_char, c_ptr, pcoll_opts_c
      integer(c_int), value :: comm
      character(kind=c_char), intent(in) :: name(*)
      type(pcoll_opts_c), intent(in) :: opts
      type(c_ptr), intent(out) :: out
      integer(c_int) :: river_pcoll_open_c
    end function river_pcoll_open_c
    function river_pcoll_close_c(pc) bind(C, name='river_pcoll_close')
      import :: c_int, c_ptr
      type(c_ptr), value :: pc
      integer(c_int) :: river_pcoll_close_c
    end function river_pcoll_close_c
    function river_pcoll_info_get_c(pc, info) &
        bind(C, name='river_pcoll_info_get')
      import :: c_int, c_ptr, river_pcoll_info
      type(c_ptr), value :: pc
      type(river_pcoll_info), intent(out) :: info
      integer(c_int) :: river_pcoll_info_get_c
    end function river_pcoll_info_get_c
    function river_pcoll_schema_c(pc, schema) bind(C, name='river_pcoll_schema')
      import :: c_int, c_ptr
      type(c_ptr), value :: pc
      type(c_ptr), intent(out) :: schema
      integer(c_int) :: river_pcoll_schema_c
    end function river_pcoll_schema_c
    function river_pcoll_partition_c(pc, p, part) &
        bind(C, name='river_pcoll_partition')
      import :: c_int, c_ptr, river_pcoll_part
      type(c_ptr), value :: pc
      integer(c_int), value :: p
      type(river_pcoll_part), intent(out) :: part
      integer(c_int) :: river_pcoll_partition_c
    end function river_pcoll_partition_c
    function river_pcoll_disk_path_c(pc, d, buf, len) &
        bind(C, name='river_pcoll_disk_path')
      import :: c_int, c_ptr, c_char, c_size_t
      type(c_ptr), value :: pc
      integer(c_int), value :: d
      character(kind=c_char), intent(out) :: buf(*)
      integer(c_size_t), intent(inout) :: len
      integer(c_int) :: river_pcoll_disk_path_c
    end function river_pcoll_disk_path_c
    function river_pcoll_read_block_c(pc, p, block, buf, bufsize, nrecords) &
        bind(C, name='river_pcoll_read_block')
      import :: c_int, c_ptr, c_int64_t, c_size_t
      type(c_ptr), value :: pc
      integer(c_int), value :: p
      integer(c_int64_t), value :: block
      type(*), intent(inout) :: buf(*)
      integer(c_size_t), value :: bufsize
      integer(c_size_t), intent(out) :: nrecords
      integer(c_int) :: river_pcoll_read_block_c
    end function river_pcoll_read_block_c
    function river_pcoll_blocks_c(pc, p, records_per_block, nblocks) &
        bind(C, name='river_pcoll_blocks')
      import :: c_int, c_ptr, c_size_t, c_int64_t
      type(c_ptr), value :: pc
      integer(c_int), value :: p
      integer(c_size_t), intent(out) :: records_per_block
      integer(c_int64_t), intent(out) :: nblocks
      integer(c_int) :: river_pcoll_blocks_c
    end function river_pcoll_blocks_c
    function river_pcoll_verify_copy_c(pc, p, c, bad_block) &
        bind(C, name='river_pcoll_verify_copy')
      import :: c_int, c_ptr, c_int64_t
      type(c_ptr), value :: pc
      integer(c_int), value :: p, c
      integer(c_int64_t), intent(out) :: bad_block
      integer(c_int) :: river_pcoll_verify_copy_c
    end function river_pcoll_verify_copy_c
    function river_pcoll_remove_c(name, opts) bind(C, name='river_pcoll_remove')
      import :: c_int, c_char, pcoll_opts_c
      character(kind=c_char), intent(in) :: name(*)
      type(pcoll_opts_c), intent(in) :: opts
      integer(c_int) :: river_pcoll_remove_c
    end function river_pcoll_remove_c
    function river_pcoll_check_name_c(name) &
        bind(C, name='river_pcoll_check_name')
      import :: c_int, c_char
      character(kind=c_char), intent(in) :: name(*)
      integer(c_int) :: river_pcoll_check_name_c
    end function river_pcoll_check_name_c
    ! river/gensort.h (flags is C's unsigned), river/checksum.h
    function river_gensort_fill_c(first, count, flags, seed, buf) &
        bind(C, name='river_gensort_fill')
      import :: c_int, c_int64_t, c_size_t
      integer(c_int64_t), value :: first
      integer(c_size_t), value :: count
      integer(c_int), value :: flags
      integer(c_int64_t), value :: seed
      type(*), intent(inout) :: buf(*)
      integer(c_int) :: river_gensort_fill_c
    end function river_gensort_fill_c
    !> river_hash64 (C): splitmix64 of x; the uint64 travels as int64 bits.
    function river_hash64(x) bind(C, name='river_hash64')
      import :: c_int64_t
      integer(c_int64_t), value :: x
      integer(c_int64_t) :: river_hash64
    end function river_hash64
    function river_crc32c_c(buf, len, crc) bind(C, name='river_crc32c')
      import :: c_int, c_size_t, c_int32_t
      type(*), intent(in) :: buf(*)
      integer(c_size_t), value :: len
      integer(c_int32_t), intent(inout) :: crc
      integer(c_int) :: river_crc32c_c
    end function river_crc32c_c
    ! river/dq.h (create through a shim: comm is an MPI_Fint)
    function river_dq_create_c(comm, role, record_size, opts, out) &
        bind(C, name='river__f_dq_create')
      import :: c_int, c_ptr, c_size_t, dq_opts_c
      integer(c_int), value :: comm, role
      integer(c_size_t), value :: record_size
      type(dq_opts_c), intent(in) :: opts
      type(c_ptr), intent(out) :: out
      integer(c_int) :: river_dq_create_c
    end function river_dq_create_c
    function river_dq_put_c(q, records, nrecords) bind(C, name='river_dq_put')
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: q
      type(*), intent(in) :: records(*)
      integer(c_size_t), value :: nrecords
      integer(c_int) :: river_dq_put_c
    end function river_dq_put_c
    function river_dq_try_put_c(q, records, nrecords) &
        bind(C, name='river_dq_try_put')
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: q
      type(*), intent(in) :: records(*)
      integer(c_size_t), value :: nrecords
      integer(c_int) :: river_dq_try_put_c
    end function river_dq_try_put_c
    function river_dq_reserve_c(q, buf, max) bind(C, name='river_dq_reserve')
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: q
      type(c_ptr), intent(out) :: buf
      integer(c_size_t), intent(out) :: max
      integer(c_int) :: river_dq_reserve_c
    end function river_dq_reserve_c
    function river_dq_commit_c(q, n) bind(C, name='river_dq_commit')
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: q
      integer(c_size_t), value :: n
      integer(c_int) :: river_dq_commit_c
    end function river_dq_commit_c
    function river_dq_close_c(q) bind(C, name='river_dq_close')
      import :: c_int, c_ptr
      type(c_ptr), value :: q
      integer(c_int) :: river_dq_close_c
    end function river_dq_close_c
    function river_dq_get_c(q, records, nrecords, from) &
        bind(C, name='river_dq_get')
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: q
      type(c_ptr), intent(out) :: records
      integer(c_size_t), intent(out) :: nrecords
      integer(c_int), intent(out) :: from
      integer(c_int) :: river_dq_get_c
    end function river_dq_get_c
    function river_dq_try_get_c(q, records, nrecords, from) &
        bind(C, name='river_dq_try_get')
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: q
      type(c_ptr), intent(out) :: records
      integer(c_size_t), intent(out) :: nrecords
      integer(c_int), intent(out) :: from
      integer(c_int) :: river_dq_try_get_c
    end function river_dq_try_get_c
    function river_dq_release_c(q) bind(C, name='river_dq_release')
      import :: c_int, c_ptr
      type(c_ptr), value :: q
      integer(c_int) :: river_dq_release_c
    end function river_dq_release_c
    function river_dq_end_unit_c(q) bind(C, name='river_dq_end_unit')
      import :: c_int, c_ptr
      type(c_ptr), value :: q
      integer(c_int) :: river_dq_end_unit_c
    end function river_dq_end_unit_c
    function river_dq_unit_c(q, unit, first, last) &
        bind(C, name='river_dq_unit')
      import :: c_int, c_int64_t, c_ptr
      type(c_ptr), value :: q
      integer(c_int64_t), intent(out) :: unit
      integer(c_int), intent(out) :: first, last
      integer(c_int) :: river_dq_unit_c
    end function river_dq_unit_c
    function river_dq_stats_get_c(q, stats) bind(C, name='river_dq_stats_get')
      import :: c_int, c_ptr, river_dq_stats
      type(c_ptr), value :: q
      type(river_dq_stats), intent(out) :: stats
      integer(c_int) :: river_dq_stats_get_c
    end function river_dq_stats_get_c
    function river_dq_destroy_c(q) bind(C, name='river_dq_destroy')
      import :: c_int, c_ptr
      type(c_ptr), value :: q
      integer(c_int) :: river_dq_destroy_c
    end function river_dq_destroy_c
    ! river/gd.h (open through a shim: comm is an MPI_Fint)
    function river_gd_open_c(comm, pc, opts, out) &
        bind(C, name='river__f_gd_open')
      import :: c_int, c_ptr, gd_opts_c
      integer(c_int), value :: comm
      type(c_ptr), value :: pc
      type(gd_opts_c), intent(in) :: opts
      type(c_ptr), intent(out) :: out
      integer(c_int) :: river_gd_open_c
    end function river_gd_open_c
    function river_gd_next_c(gd, records, nrecords, partition, block) &
        bind(C, name='river_gd_next')
      import :: c_int, c_ptr, c_size_t, c_int64_t
      type(c_ptr), value :: gd
      type(c_ptr), intent(out) :: records
      integer(c_size_t), intent(out) :: nrecords
      integer(c_int), intent(out) :: partition
      integer(c_int64_t), intent(out) :: block
      integer(c_int) :: river_gd_next_c
    end function river_gd_next_c
    function river_gd_stats_get_c(gd, stats) bind(C, name='river_gd_stats_get')
      import :: c_int, c_ptr, river_gd_stats
      type(c_ptr), value :: gd
      type(river_gd_stats), intent(out) :: stats
      integer(c_int) :: river_gd_stats_get_c
    end function river_gd_stats_get_c
    function river_gd_close_c(gd) bind(C, name='river_gd_close')
      import :: c_int, c_ptr
      type(c_ptr), value :: gd
      integer(c_int) :: river_gd_close_c
    end function river_gd_close_c
    function river_gd_fluid_ideal_c(rates, n, r, per_client, total) &
        bind(C, name='river_gd_fluid_ideal')
      import :: c_int, c_double
      real(c_double), intent(in) :: rates(*)
      integer(c_int), value :: n, r
      real(c_double), intent(out) :: per_client, total
      integer(c_int) :: river_gd_fluid_ideal_c
    end function river_gd_fluid_ideal_c
    ! river/throttle.h
    function river_throttle_create_c(rate, burst, out) &
        bind(C, name='river_throttle_create')
      import :: c_int, c_ptr, c_double
      real(c_double), value :: rate, burst
      type(c_ptr), intent(out) :: out
      integer(c_int) :: river_throttle_create_c
    end function river_throttle_create_c
    subroutine river_throttle_destroy_c(t) &
        bind(C, name='river_throttle_destroy')
      import :: c_ptr
      type(c_ptr), value :: t
    end subroutine river_throttle_destroy_c
    function river_throttle_consume_c(t, bytes) &
        bind(C, name='river_throttle_consume')
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: t
      integer(c_size_t), value :: bytes
      integer(c_int) :: river_throttle_consume_c
    end function river_throttle_consume_c
    function river_throttle_set_factor_c(t, factor) &
        bind(C, name='river_throttle_set_factor')
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: t
      real(c_double), value :: factor
      integer(c_int) :: river_throttle_set_factor_c
    end function river_throttle_set_factor_c
    function river_throttle_rate_c(t, rate) bind(C, name='river_throttle_rate')
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: t
      real(c_double), intent(out) :: rate
      integer(c_int) :: river_throttle_rate_c
    end function river_throttle_rate_c
    function river_throttle_slept_c(t, seconds) &
        bind(C, name='river_throttle_slept')
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: t
      real(c_double), intent(out) :: seconds
      integer(c_int) :: river_throttle_slept_c
    end function river_throttle_slept_c
    function river_perturb_parse_c(spec, out) bind(C, name='river_perturb_parse')
      import :: c_int, c_char, c_ptr
      character(kind=c_char), intent(in) :: spec(*)
      type(c_ptr), intent(out) :: out
      integer(c_int) :: river_perturb_parse_c
    end function river_perturb_parse_c
    subroutine river_perturb_destroy_c(p) bind(C, name='river_perturb_destroy')
      import :: c_ptr
      type(c_ptr), value :: p
    end subroutine river_perturb_destroy_c
    function river_perturb_factor_c(p, kind, index, t, factor) &
        bind(C, name='river_perturb_factor')
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: p
      integer(c_int), value :: kind, index
      real(c_double), value :: t
      real(c_double), intent(out) :: factor
      integer(c_int) :: river_perturb_factor_c
    end function river_perturb_factor_c
    function river_perturb_count_c(p, kind, k) bind(C, name='river_perturb_count')
      import :: c_int, c_ptr
      type(c_ptr), value :: p
      integer(c_int), value :: kind
      integer(c_int), intent(out) :: k
      integer(c_int) :: river_perturb_count_c
    end function river_perturb_count_c
    function river_perturb_max_index_c(p, kind, max) &
        bind(C, name='river_perturb_max_index')
      import :: c_int, c_ptr
      type(c_ptr), value :: p
      integer(c_int), value :: kind
      integer(c_int), intent(out) :: max
      integer(c_int) :: river_perturb_max_index_c
    end function river_perturb_max_index_c
    function river_cpu_hog_start_c(fraction, out) &
        bind(C, name='river_cpu_hog_start')
      import :: c_int, c_ptr, c_double
      real(c_double), value :: fraction
      type(c_ptr), intent(out) :: out
      integer(c_int) :: river_cpu_hog_start_c
    end function river_cpu_hog_start_c
    function river_cpu_hog_stop_c(h) bind(C, name='river_cpu_hog_stop')
      import :: c_int, c_ptr
      type(c_ptr), value :: h
      integer(c_int) :: river_cpu_hog_stop_c
    end function river_cpu_hog_stop_c
    function c_strlen(s) bind(C, name='strlen')
      import :: c_ptr, c_size_t
      type(c_ptr), value :: s
      integer(c_size_t) :: c_strlen
    end function c_strlen
  end interface

contains

  !> buf (re)allocated to exactly nbytes, holding the nbytes at r: the
  !> copied ("_bytes") variants of the readers share it.
  subroutine bytes_from(r, nbytes, buf)
    type(c_ptr), intent(in) :: r
    integer(c_size_t), intent(in) :: nbytes
    integer(c_int8_t), allocatable, intent(inout) :: buf(:)
    integer(c_int8_t), pointer :: src(:)
    if (allocated(buf)) then
      if (size(buf, kind=c_size_t) /= nbytes) deallocate(buf)
    end if
    if (.not. allocated(buf)) allocate(buf(nbytes))
    if (nbytes > 0) then
      call c_f_pointer(r, src, [nbytes])
      buf(:) = src
    end if
  end subroutine bytes_from

  ! Hand rc to ierr if present; otherwise stop on failure with the
  ! message, naming the procedure that failed.
  subroutine river_check(rc, what, ierr)
    integer(c_int), intent(in) :: rc
    character(len=*), intent(in) :: what
    integer, optional, intent(out) :: ierr
    character(len=:), allocatable :: msg
    if (present(ierr)) then
      ierr = int(rc)
    else if (rc /= RIVER_SUCCESS) then
      msg = 'river: ' // what // ': ' // river_strerror(int(rc))
      error stop msg
    end if
  end subroutine river_check

  !> Copy the NUL-terminated C string at ptr into a Fortran string
  !> ('' for a null pointer). Public as generic river_c_string.
  function river_c_string_ptr(ptr) result(str)
    type(c_ptr), intent(in) :: ptr
    character(len=:), allocatable :: str
    character(kind=c_char), pointer :: chars(:)
    integer :: i, n
    if (.not. c_associated(ptr)) then
      str = ''
      return
    end if
    n = int(c_strlen(ptr))
    call c_f_pointer(ptr, chars, [n])
    allocate(character(len=n) :: str)
    do i = 1, n
      str(i:i) = chars(i)
    end do
  end function river_c_string_ptr

  !> The text in a character(kind=c_char) array up to its first NUL (or
  !> all of it). Public as generic river_c_string.
  function river_c_string_chars(chars) result(str)
    character(kind=c_char), intent(in) :: chars(:)
    character(len=:), allocatable :: str
    integer :: i, n
    n = size(chars)
    do i = 1, size(chars)
      if (chars(i) == c_null_char) then
        n = i - 1
        exit
      end if
    end do
    allocate(character(len=n) :: str)
    do i = 1, n
      str(i:i) = chars(i)
    end do
  end function river_c_string_chars

  ! Fortran string -> NUL-terminated C character array.
  pure function c_str(s) result(cs)
    character(len=*), intent(in) :: s
    character(kind=c_char) :: cs(len(s) + 1)
    integer :: i
    do i = 1, len(s)
      cs(i) = s(i:i)
    end do
    cs(len(s) + 1) = c_null_char
  end function c_str

  !> Initialise River (and MPI, if the caller has not; see river_init in
  !> river.h). Collective when it initialises MPI.
  subroutine river_init(ierr)
    integer, optional, intent(out) :: ierr
    call river_check(river_init_c(c_null_ptr, c_null_ptr), 'river_init', ierr)
  end subroutine river_init

  !> Undo one river_init; finalises MPI only if River initialised it.
  subroutine river_finalize(ierr)
    integer, optional, intent(out) :: ierr
    call river_check(river_finalize_c(), 'river_finalize', ierr)
  end subroutine river_finalize

  subroutine river_initialized(flag, ierr)
    logical, intent(out) :: flag
    integer, optional, intent(out) :: ierr
    integer(c_int) :: cflag, rc
    rc = river_initialized_c(cflag)
    if (rc == RIVER_SUCCESS) flag = cflag /= 0
    call river_check(rc, 'river_initialized', ierr)
  end subroutine river_initialized

  !> The version of the River library linked at run time.
  subroutine river_get_version(major, minor, release, ierr)
    integer, intent(out) :: major, minor, release
    integer, optional, intent(out) :: ierr
    integer(c_int) :: cmaj, cmin, crel, rc
    rc = river_get_version_c(cmaj, cmin, crel)
    if (rc == RIVER_SUCCESS) then
      major = cmaj
      minor = cmin
      release = crel
    end if
    call river_check(rc, 'river_get_version', ierr)
  end subroutine river_get_version

  ! Ask a caller-buffer C function for its string: first the length,
  ! then the text into a buffer of that size.
  subroutine fetch_string(which, str, rc, h, d)
    integer, intent(in) :: which   ! 1: build info, 2: topology,
                                   ! 3: schema h's text, 4: pcoll h's disk d
    character(len=:), allocatable, intent(out) :: str
    integer(c_int), intent(out) :: rc
    type(c_ptr), optional, intent(in) :: h
    integer, optional, intent(in) :: d
    character(kind=c_char) :: probe(1)
    character(kind=c_char), allocatable :: buf(:)
    integer(c_size_t) :: n
    integer :: i
    n = 1
    rc = call_fill(probe, n)
    if (rc == RIVER_ENOBUFS) then
      allocate(buf(n))
      rc = call_fill(buf, n)
    else if (rc == RIVER_SUCCESS) then
      allocate(buf(1))  ! empty string fits the probe
      buf(1) = probe(1)
    end if
    if (rc /= RIVER_SUCCESS) return
    allocate(character(len=int(n)) :: str)
    do i = 1, int(n)
      str(i:i) = buf(i)
    end do
  contains
    integer(c_int) function call_fill(b, len)
      character(kind=c_char), intent(out) :: b(*)
      integer(c_size_t), intent(inout) :: len
      select case (which)
      case (1)
        call_fill = river_build_info_c(b, len)
      case (2)
        call_fill = river_topo_describe_c(b, len)
      case (3)
        call_fill = river_schema_format_c(h, b, len)
      case default
        call_fill = river_pcoll_disk_path_c(h, int(d, c_int), b, len)
      end select
    end function call_fill
  end subroutine fetch_string

  !> One line describing River and the MPI, HDF5 and hwloc it runs on.
  subroutine river_build_info(info, ierr)
    character(len=:), allocatable, intent(out) :: info
    integer, optional, intent(out) :: ierr
    integer(c_int) :: rc
    call fetch_string(1, info, rc)
    call river_check(rc, 'river_build_info', ierr)
  end subroutine river_build_info

  !> One line describing the host, cores and binding of this process.
  subroutine river_topo_describe(desc, ierr)
    character(len=:), allocatable, intent(out) :: desc
    integer, optional, intent(out) :: ierr
    integer(c_int) :: rc
    call fetch_string(2, desc, rc)
    call river_check(rc, 'river_topo_describe', ierr)
  end subroutine river_topo_describe

  !> The message for an error code (never empty).
  function river_strerror(err) result(msg)
    integer, intent(in) :: err
    character(len=:), allocatable :: msg
    msg = river_c_string(river_strerror_c(int(err, c_int)))
  end function river_strerror

  !> The name of an error code, e.g. 'RIVER_EINVAL'.
  function river_err_name(err) result(name)
    integer, intent(in) :: err
    character(len=:), allocatable :: name
    name = river_c_string(river_err_name_c(int(err, c_int)))
  end function river_err_name

  !> Log msg at level (RIVER_LOG_ERROR .. RIVER_LOG_DEBUG).
  subroutine river_log(level, msg, ierr)
    integer, intent(in) :: level
    character(len=*), intent(in) :: msg
    integer, optional, intent(out) :: ierr
    call river_check(river_log_c(int(level, c_int), c_str(msg)), &
                     'river_log', ierr)
  end subroutine river_log

  subroutine river_log_set_level(level, ierr)
    integer, intent(in) :: level
    integer, optional, intent(out) :: ierr
    call river_check(river_log_set_level_c(int(level, c_int)), &
                     'river_log_set_level', ierr)
  end subroutine river_log_set_level

  subroutine river_log_get_level(level, ierr)
    integer, intent(out) :: level
    integer, optional, intent(out) :: ierr
    integer(c_int) :: clevel, rc
    rc = river_log_get_level_c(clevel)
    if (rc == RIVER_SUCCESS) level = clevel
    call river_check(rc, 'river_log_get_level', ierr)
  end subroutine river_log_get_level

  !> Parse 'error', 'warn', 'info' or 'debug' (any case) into level.
  subroutine river_log_parse_level(name, level, ierr)
    character(len=*), intent(in) :: name
    integer, intent(out) :: level
    integer, optional, intent(out) :: ierr
    integer(c_int) :: clevel, rc
    rc = river_log_parse_level_c(c_str(name), clevel)
    if (rc == RIVER_SUCCESS) level = clevel
    call river_check(rc, 'river_log_parse_level', ierr)
  end subroutine river_log_parse_level

  !> The level's name ('error' .. 'debug'; 'unknown' for other values).
  function river_log_level_name(level) result(name)
    integer, intent(in) :: level
    character(len=:), allocatable :: name
    name = river_c_string(river_log_level_name_c(int(level, c_int)))
  end function river_log_level_name

  !> Send log messages to handler (with ctx passed through) instead of
  !> stderr.
  subroutine river_log_set_handler(handler, ctx, ierr)
    procedure(river_log_handler) :: handler
    type(c_ptr), intent(in) :: ctx
    integer, optional, intent(out) :: ierr
    call river_check(river_log_set_handler_c(c_funloc(handler), ctx), &
                     'river_log_set_handler', ierr)
  end subroutine river_log_set_handler

  !> Send log messages to stderr again.
  subroutine river_log_reset_handler(ierr)
    integer, optional, intent(out) :: ierr
    call river_check(river_log_set_handler_c(c_null_funptr, c_null_ptr), &
                     'river_log_reset_handler', ierr)
  end subroutine river_log_reset_handler

  !> Seconds on a monotonic wall clock.
  function river_wtime() result(t)
    real(c_double) :: t
    t = river_wtime_c()
  end function river_wtime

  subroutine river_timer_reset(t, ierr)
    type(river_timer), intent(inout) :: t
    integer, optional, intent(out) :: ierr
    call river_check(river_timer_reset_c(t), 'river_timer_reset', ierr)
  end subroutine river_timer_reset

  subroutine river_timer_start(t, ierr)
    type(river_timer), intent(inout) :: t
    integer, optional, intent(out) :: ierr
    call river_check(river_timer_start_c(t), 'river_timer_start', ierr)
  end subroutine river_timer_start

  subroutine river_timer_stop(t, ierr)
    type(river_timer), intent(inout) :: t
    integer, optional, intent(out) :: ierr
    call river_check(river_timer_stop_c(t), 'river_timer_stop', ierr)
  end subroutine river_timer_stop

  subroutine river_timer_elapsed(t, seconds, ierr)
    type(river_timer), intent(in) :: t
    real(c_double), intent(out) :: seconds
    integer, optional, intent(out) :: ierr
    integer(c_int) :: rc
    real(c_double) :: s
    rc = river_timer_elapsed_c(t, s)
    if (rc == RIVER_SUCCESS) seconds = s
    call river_check(rc, 'river_timer_elapsed', ierr)
  end subroutine river_timer_elapsed

  ! ------------------------------------------------------------- schemas

  ! A NUL-terminated copy of s in cs, and c_loc of it in ptr (for the
  ! string fields of C option structs; cs must outlive the C call).
  subroutine c_str_ptr(s, cs, ptr)
    character(len=*), intent(in) :: s
    character(kind=c_char), allocatable, target, intent(inout) :: cs(:)
    type(c_ptr), intent(inout) :: ptr
    cs = c_str(s)
    ptr = c_loc(cs)
  end subroutine c_str_ptr

  !> Parse a schema's text form ("NAME:TYPE[,...][;key=NAME]") into a new
  !> schema. Bad text gives RIVER_EFORMAT (and a logged message).
  subroutine river_schema_parse(text, schema, ierr)
    character(len=*), intent(in) :: text
    type(river_schema), intent(out) :: schema
    integer, optional, intent(out) :: ierr
    type(c_ptr) :: out
    integer(c_int) :: rc
    out = c_null_ptr
    rc = river_schema_parse_c(c_str(text), out)
    if (rc == RIVER_SUCCESS) schema%ptr = out
    call river_check(rc, 'river_schema_parse', ierr)
  end subroutine river_schema_parse

  !> The sort benchmark's schema, RIVER_SCHEMA_DEFAULT.
  subroutine river_schema_create_default(schema, ierr)
    type(river_schema), intent(out) :: schema
    integer, optional, intent(out) :: ierr
    type(c_ptr) :: out
    integer(c_int) :: rc
    out = c_null_ptr
    rc = river_schema_create_default_c(out)
    if (rc == RIVER_SUCCESS) schema%ptr = out
    call river_check(rc, 'river_schema_create_default', ierr)
  end subroutine river_schema_create_default

  !> A deep copy of schema (destroy both).
  subroutine river_schema_clone(schema, copy, ierr)
    type(river_schema), intent(in) :: schema
    type(river_schema), intent(out) :: copy
    integer, optional, intent(out) :: ierr
    type(c_ptr) :: out
    integer(c_int) :: rc
    out = c_null_ptr
    rc = river_schema_clone_c(schema%ptr, out)
    if (rc == RIVER_SUCCESS) copy%ptr = out
    call river_check(rc, 'river_schema_clone', ierr)
  end subroutine river_schema_clone

  !> Free schema and make it null; a null schema is left alone.
  subroutine river_schema_destroy(schema)
    type(river_schema), intent(inout) :: schema
    call river_schema_destroy_c(schema%ptr)
    schema%ptr = c_null_ptr
  end subroutine river_schema_destroy

  !> The record size in bytes.
  subroutine river_schema_record_size(schema, size, ierr)
    type(river_schema), intent(in) :: schema
    integer(c_size_t), intent(out) :: size
    integer, optional, intent(out) :: ierr
    integer(c_size_t) :: n
    integer(c_int) :: rc
    rc = river_schema_record_size_c(schema%ptr, n)
    if (rc == RIVER_SUCCESS) size = n
    call river_check(rc, 'river_schema_record_size', ierr)
  end subroutine river_schema_record_size

  !> The number of fields.
  subroutine river_schema_nfields(schema, n, ierr)
    type(river_schema), intent(in) :: schema
    integer, intent(out) :: n
    integer, optional, intent(out) :: ierr
    integer(c_int) :: cn, rc
    rc = river_schema_nfields_c(schema%ptr, cn)
    if (rc == RIVER_SUCCESS) n = cn
    call river_check(rc, 'river_schema_nfields', ierr)
  end subroutine river_schema_nfields

  !> Field i (0-based): any of its name, type (RIVER_TYPE_*), element
  !> count (N of char[N]/bytes[N]; 1 for numbers) and byte offset.
  !> RIVER_EINVAL if i is out of range.
  subroutine river_schema_field(schema, i, name, type, count, offset, ierr)
    type(river_schema), intent(in) :: schema
    integer, intent(in) :: i
    character(len=:), allocatable, optional, intent(out) :: name
    integer, optional, intent(out) :: type
    integer(c_size_t), optional, intent(out) :: count, offset
    integer, optional, intent(out) :: ierr
    type(c_ptr) :: cname
    integer(c_int) :: ctype, rc
    integer(c_size_t) :: ccount, coffset
    rc = river_schema_field_c(schema%ptr, int(i, c_int), cname, ctype, &
                              ccount, coffset)
    if (rc == RIVER_SUCCESS) then
      if (present(name)) name = river_c_string(cname)
      if (present(type)) type = ctype
      if (present(count)) count = ccount
      if (present(offset)) offset = coffset
    end if
    call river_check(rc, 'river_schema_field', ierr)
  end subroutine river_schema_field

  !> The key: any of its field index (0-based), offset and size in bytes.
  subroutine river_schema_key(schema, field, offset, size, ierr)
    type(river_schema), intent(in) :: schema
    integer, optional, intent(out) :: field
    integer(c_size_t), optional, intent(out) :: offset, size
    integer, optional, intent(out) :: ierr
    integer(c_int) :: cfield, rc
    integer(c_size_t) :: coffset, csize
    rc = river_schema_key_c(schema%ptr, cfield, coffset, csize)
    if (rc == RIVER_SUCCESS) then
      if (present(field)) field = cfield
      if (present(offset)) offset = coffset
      if (present(size)) size = csize
    end if
    call river_check(rc, 'river_schema_key', ierr)
  end subroutine river_schema_key

  !> The index (0-based) of the field called name; RIVER_ENOTFOUND if
  !> there is none.
  subroutine river_schema_find(schema, name, field, ierr)
    type(river_schema), intent(in) :: schema
    character(len=*), intent(in) :: name
    integer, intent(out) :: field
    integer, optional, intent(out) :: ierr
    integer(c_int) :: cfield, rc
    rc = river_schema_find_c(schema%ptr, c_str(name), cfield)
    if (rc == RIVER_SUCCESS) field = cfield
    call river_check(rc, 'river_schema_find', ierr)
  end subroutine river_schema_find

  !> The canonical text form (always with ";key=NAME").
  subroutine river_schema_format(schema, text, ierr)
    type(river_schema), intent(in) :: schema
    character(len=:), allocatable, intent(out) :: text
    integer, optional, intent(out) :: ierr
    integer(c_int) :: rc
    call fetch_string(3, text, rc, h=schema%ptr)
    call river_check(rc, 'river_schema_format', ierr)
  end subroutine river_schema_format

  !> Whether a and b have the same fields (names, types, sizes, order) and
  !> key.
  subroutine river_schema_equal(a, b, equal, ierr)
    type(river_schema), intent(in) :: a, b
    logical, intent(out) :: equal
    integer, optional, intent(out) :: ierr
    integer(c_int) :: ceq, rc
    rc = river_schema_equal_c(a%ptr, b%ptr, ceq)
    if (rc == RIVER_SUCCESS) equal = ceq /= 0
    call river_check(rc, 'river_schema_equal', ierr)
  end subroutine river_schema_equal

  !> Compare the keys of records a and b (each a record laid out as the
  !> schema: a scalar of a matching bind(C) type, or the first element of
  !> one in an array): cmp < 0, 0 or > 0.
  subroutine river_schema_compare(schema, a, b, cmp, ierr)
    type(river_schema), intent(in) :: schema
    type(*), intent(in) :: a, b
    integer, intent(out) :: cmp
    integer, optional, intent(out) :: ierr
    integer(c_int) :: ccmp, rc
    rc = river_schema_compare_c(schema%ptr, a, b, ccmp)
    if (rc == RIVER_SUCCESS) cmp = ccmp
    call river_check(rc, 'river_schema_compare', ierr)
  end subroutine river_schema_compare

  !> A RIVER_TYPE_* value's name as in the text form ("int32", ...,
  !> "char", "bytes"); "unknown" for other values.
  function river_type_name(type) result(name)
    integer, intent(in) :: type
    character(len=:), allocatable :: name
    name = river_c_string(river_type_name_c(int(type, c_int)))
  end function river_type_name

  ! ------------------------------------------------ single-disk collections

  !> Start writing a collection of record_size-byte records at path
  !> (written as "<path>.tmp" until river_coll_commit). block_size: a
  !> multiple of RIVER_COLL_ALIGN (default RIVER_COLL_DEFAULT_BLOCK_SIZE);
  !> direct_io: bypass the page cache where allowed; label: text kept in
  !> the header (at most RIVER_COLL_LABEL_MAX bytes).
  subroutine river_coll_create(path, record_size, coll, block_size, &
                               direct_io, label, ierr)
    character(len=*), intent(in) :: path
    integer(c_size_t), intent(in) :: record_size
    type(river_coll), intent(out) :: coll
    integer(c_size_t), optional, intent(in) :: block_size
    logical, optional, intent(in) :: direct_io
    character(len=*), optional, intent(in) :: label
    integer, optional, intent(out) :: ierr
    type(coll_opts_c) :: opts
    character(kind=c_char), allocatable, target :: label_c(:)
    type(c_ptr) :: out
    integer(c_int) :: rc
    if (present(block_size)) opts%block_size = block_size
    if (present(direct_io)) opts%direct_io = merge(1, 0, direct_io)
    if (present(label)) call c_str_ptr(label, label_c, opts%label)
    out = c_null_ptr
    rc = river_coll_create_c(c_str(path), record_size, opts, out)
    if (rc == RIVER_SUCCESS) coll%ptr = out
    call river_check(rc, 'river_coll_create', ierr)
  end subroutine river_coll_create

  !> Append nrecords records from records (any array holding at least
  !> nrecords * record_size bytes).
  subroutine river_coll_append(coll, records, nrecords, ierr)
    type(river_coll), intent(in) :: coll
    type(*), intent(in) :: records(*)
    integer(c_size_t), intent(in) :: nrecords
    integer, optional, intent(out) :: ierr
    call river_check(river_coll_append_c(coll%ptr, records, nrecords), &
                     'river_coll_append', ierr)
  end subroutine river_coll_append

  !> Finish a collection being written and rename it into place. Frees
  !> the writer (coll becomes null) whether or not it succeeds; a reader
  !> gives RIVER_EINVAL and stays open.
  subroutine river_coll_commit(coll, ierr)
    type(river_coll), intent(inout) :: coll
    integer, optional, intent(out) :: ierr
    integer(c_int) :: rc
    rc = river_coll_commit_c(coll%ptr)
    if (rc /= RIVER_EINVAL) coll%ptr = c_null_ptr
    call river_check(rc, 'river_coll_commit', ierr)
  end subroutine river_coll_commit

  !> Open the collection at path for reading. record_size 0 accepts any
  !> record size (else a different one is RIVER_EFORMAT); a missing file
  !> is RIVER_ENOTFOUND, a damaged one RIVER_ECORRUPT.
  subroutine river_coll_open(path, record_size, coll, direct_io, ierr)
    character(len=*), intent(in) :: path
    integer(c_size_t), intent(in) :: record_size
    type(river_coll), intent(out) :: coll
    logical, optional, intent(in) :: direct_io
    integer, optional, intent(out) :: ierr
    type(coll_opts_c) :: opts
    type(c_ptr) :: out
    integer(c_int) :: rc
    if (present(direct_io)) opts%direct_io = merge(1, 0, direct_io)
    out = c_null_ptr
    rc = river_coll_open_c(c_str(path), record_size, opts, out)
    if (rc == RIVER_SUCCESS) coll%ptr = out
    call river_check(rc, 'river_coll_open', ierr)
  end subroutine river_coll_open

  !> Close a reader, or abandon a writer (its temporary file is removed).
  !> coll becomes null; a null coll is a no-op.
  subroutine river_coll_close(coll, ierr)
    type(river_coll), intent(inout) :: coll
    integer, optional, intent(out) :: ierr
    integer(c_int) :: rc
    rc = river_coll_close_c(coll%ptr)
    coll%ptr = c_null_ptr
    call river_check(rc, 'river_coll_close', ierr)
  end subroutine river_coll_close

  !> The header's facts (for a writer: what has been appended so far).
  subroutine river_coll_stat(coll, info, ierr)
    type(river_coll), intent(in) :: coll
    type(river_coll_info), intent(out) :: info
    integer, optional, intent(out) :: ierr
    type(river_coll_info) :: cinfo
    integer(c_int) :: rc
    rc = river_coll_stat_c(coll%ptr, cinfo)
    if (rc == RIVER_SUCCESS) info = cinfo
    call river_check(rc, 'river_coll_stat', ierr)
  end subroutine river_coll_stat

  !> Read block `block` (0-based) into buf, bufsize bytes (size(buf) *
  !> c_sizeof(buf(1)); at least records_per_block * record_size, else
  !> RIVER_ENOBUFS), and verify it; nrecords gets its record count.
  subroutine river_coll_read_block(coll, block, buf, bufsize, nrecords, ierr)
    type(river_coll), intent(in) :: coll
    integer(c_int64_t), intent(in) :: block
    type(*), intent(inout) :: buf(*)
    integer(c_size_t), intent(in) :: bufsize
    integer(c_size_t), intent(out) :: nrecords
    integer, optional, intent(out) :: ierr
    integer(c_size_t) :: n
    integer(c_int) :: rc
    rc = river_coll_read_block_c(coll%ptr, block, buf, bufsize, n)
    if (rc == RIVER_SUCCESS) nrecords = n
    call river_check(rc, 'river_coll_read_block', ierr)
  end subroutine river_coll_read_block

  !> river_coll_next, borrowed: records points at the next block's
  !> nrecords records (valid until the next call on coll). After the last
  !> block: records null, nrecords 0 and ierr RIVER_EOS (not an error:
  !> without ierr this does not stop).
  subroutine river_coll_next_ptr(coll, records, nrecords, ierr)
    type(river_coll), intent(in) :: coll
    type(c_ptr), intent(out) :: records
    integer(c_size_t), intent(out) :: nrecords
    integer, optional, intent(out) :: ierr
    type(c_ptr) :: r
    integer(c_size_t) :: n
    integer(c_int) :: rc
    records = c_null_ptr
    nrecords = 0
    rc = river_coll_next_c(coll%ptr, r, n)
    if (rc == RIVER_SUCCESS) then
      records = r
      nrecords = n
    else if (rc == RIVER_EOS) then
      if (present(ierr)) ierr = RIVER_EOS
      return
    end if
    call river_check(rc, 'river_coll_next', ierr)
  end subroutine river_coll_next_ptr

  !> river_coll_next, copied: buf is (re)allocated to the next block's
  !> bytes (nrecords * record_size). After the last block: buf empty,
  !> nrecords 0 and ierr RIVER_EOS (not an error: without ierr this does
  !> not stop).
  subroutine river_coll_next_bytes(coll, buf, nrecords, ierr)
    type(river_coll), intent(in) :: coll
    integer(c_int8_t), allocatable, intent(inout) :: buf(:)
    integer(c_size_t), intent(out) :: nrecords
    integer, optional, intent(out) :: ierr
    type(river_coll_info) :: info
    type(c_ptr) :: r
    integer(c_size_t) :: n, nbytes
    integer(c_int) :: rc
    nrecords = 0
    rc = river_coll_stat_c(coll%ptr, info)
    if (rc == RIVER_SUCCESS) rc = river_coll_next_c(coll%ptr, r, n)
    if (rc == RIVER_EOS) then
      call bytes_from(c_null_ptr, 0_c_size_t, buf)
      if (present(ierr)) ierr = RIVER_EOS
      return
    end if
    if (rc == RIVER_SUCCESS) then
      nbytes = n * info%record_size
      call bytes_from(r, nbytes, buf)
      nrecords = n
    end if
    call river_check(rc, 'river_coll_next', ierr)
  end subroutine river_coll_next_bytes

  !> Restart stream access (river_coll_next) at block 0.
  subroutine river_coll_rewind(coll, ierr)
    type(river_coll), intent(in) :: coll
    integer, optional, intent(out) :: ierr
    call river_check(river_coll_rewind_c(coll%ptr), 'river_coll_rewind', ierr)
  end subroutine river_coll_rewind

  !> Read and verify every block: RIVER_ECORRUPT with bad_block set to the
  !> first damaged block if any is.
  subroutine river_coll_verify(coll, bad_block, ierr)
    type(river_coll), intent(in) :: coll
    integer(c_int64_t), optional, intent(out) :: bad_block
    integer, optional, intent(out) :: ierr
    integer(c_int64_t) :: bad
    integer(c_int) :: rc
    rc = river_coll_verify_c(coll%ptr, bad)
    if (rc /= RIVER_SUCCESS .and. present(bad_block)) bad_block = bad
    call river_check(rc, 'river_coll_verify', ierr)
  end subroutine river_coll_verify

  ! ------------------------------------------------- parallel collections

  !> Start writing parallel collection `name` with schema: collective over
  !> comm; rank i writes partition i. Options (defaults as in C's
  !> river_pcoll_opts): root (directory; default $RIVER_ROOT, else
  !> RIVER_PCOLL_DEFAULT_ROOT), disks (pattern with one %d, default
  !> RIVER_PCOLL_DEFAULT_DISKS), ndisks (default one per partition),
  !> replication (copies of each partition, the CLI's --mirror; default
  !> 1), layout (RIVER_LAYOUT_*), block_size (bytes, a multiple of
  !> RIVER_COLL_ALIGN), ordered (keys ascend across partitions, checked
  !> at commit), direct_io.
  subroutine river_pcoll_create(comm, name, schema, pcoll, root, disks, &
                                ndisks, replication, layout, block_size, &
                                ordered, direct_io, ierr)
    type(MPI_Comm), intent(in) :: comm
    character(len=*), intent(in) :: name
    type(river_schema), intent(in) :: schema
    type(river_pcoll), intent(out) :: pcoll
    character(len=*), optional, intent(in) :: root, disks
    integer, optional, intent(in) :: ndisks, replication, layout
    integer(c_size_t), optional, intent(in) :: block_size
    logical, optional, intent(in) :: ordered, direct_io
    integer, optional, intent(out) :: ierr
    type(pcoll_opts_c) :: opts
    character(kind=c_char), allocatable, target :: root_c(:), disks_c(:)
    type(c_ptr) :: out
    integer(c_int) :: rc
    if (present(root)) call c_str_ptr(root, root_c, opts%root)
    if (present(disks)) call c_str_ptr(disks, disks_c, opts%disks)
    if (present(ndisks)) opts%ndisks = int(ndisks, c_int)
    if (present(replication)) opts%replication = int(replication, c_int)
    if (present(layout)) opts%layout = int(layout, c_int)
    if (present(block_size)) opts%block_size = block_size
    if (present(ordered)) opts%ordered = merge(1, 0, ordered)
    if (present(direct_io)) opts%direct_io = merge(1, 0, direct_io)
    out = c_null_ptr
    rc = river_pcoll_create_c(int(comm%MPI_VAL, c_int), c_str(name), &
                              schema%ptr, opts, out)
    if (rc == RIVER_SUCCESS) pcoll%ptr = out
    call river_check(rc, 'river_pcoll_create', ierr)
  end subroutine river_pcoll_create

  !> Append nrecords records (any array of at least nrecords *
  !> record_size bytes) to this rank's partition, every copy.
  subroutine river_pcoll_write(pcoll, records, nrecords, ierr)
    type(river_pcoll), intent(in) :: pcoll
    type(*), intent(in) :: records(*)
    integer(c_size_t), intent(in) :: nrecords
    integer, optional, intent(out) :: ierr
    call river_check(river_pcoll_write_c(pcoll%ptr, records, nrecords), &
                     'river_pcoll_write', ierr)
  end subroutine river_pcoll_write

  !> Make the collection visible and free the writer (pcoll becomes
  !> null). Collective; if any rank failed, none commits and every rank
  !> gets the error. A reader gives RIVER_EINVAL and stays open.
  subroutine river_pcoll_commit(pcoll, ierr)
    type(river_pcoll), intent(inout) :: pcoll
    integer, optional, intent(out) :: ierr
    integer(c_int) :: rc
    rc = river_pcoll_commit_c(pcoll%ptr)
    if (rc /= RIVER_EINVAL) pcoll%ptr = c_null_ptr
    call river_check(rc, 'river_pcoll_commit', ierr)
  end subroutine river_pcoll_commit

  !> Open collection `name` for reading, collective over comm (any number
  !> of ranks). root and disks as for river_pcoll_create (disks: only to
  !> override the recorded pattern). RIVER_ENOTFOUND if there is none.
  subroutine river_pcoll_open(comm, name, pcoll, root, disks, direct_io, ierr)
    type(MPI_Comm), intent(in) :: comm
    character(len=*), intent(in) :: name
    type(river_pcoll), intent(out) :: pcoll
    character(len=*), optional, intent(in) :: root, disks
    logical, optional, intent(in) :: direct_io
    integer, optional, intent(out) :: ierr
    type(pcoll_opts_c) :: opts
    character(kind=c_char), allocatable, target :: root_c(:), disks_c(:)
    type(c_ptr) :: out
    integer(c_int) :: rc
    if (present(root)) call c_str_ptr(root, root_c, opts%root)
    if (present(disks)) call c_str_ptr(disks, disks_c, opts%disks)
    if (present(direct_io)) opts%direct_io = merge(1, 0, direct_io)
    out = c_null_ptr
    rc = river_pcoll_open_c(int(comm%MPI_VAL, c_int), c_str(name), opts, out)
    if (rc == RIVER_SUCCESS) pcoll%ptr = out
    call river_check(rc, 'river_pcoll_open', ierr)
  end subroutine river_pcoll_open

  !> Close a reader, or abandon a writer (collective then: its files are
  !> removed). pcoll becomes null; a null pcoll is a no-op.
  subroutine river_pcoll_close(pcoll, ierr)
    type(river_pcoll), intent(inout) :: pcoll
    integer, optional, intent(out) :: ierr
    integer(c_int) :: rc
    rc = river_pcoll_close_c(pcoll%ptr)
    pcoll%ptr = c_null_ptr
    call river_check(rc, 'river_pcoll_close', ierr)
  end subroutine river_pcoll_close

  !> Facts about the collection (from its metadata).
  subroutine river_pcoll_info_get(pcoll, info, ierr)
    type(river_pcoll), intent(in) :: pcoll
    type(river_pcoll_info), intent(out) :: info
    integer, optional, intent(out) :: ierr
    type(river_pcoll_info) :: cinfo
    integer(c_int) :: rc
    rc = river_pcoll_info_get_c(pcoll%ptr, cinfo)
    if (rc == RIVER_SUCCESS) info = cinfo
    call river_check(rc, 'river_pcoll_info_get', ierr)
  end subroutine river_pcoll_info_get

  !> A copy of the collection's schema (unlike C's borrowed pointer: the
  !> caller destroys it).
  subroutine river_pcoll_schema(pcoll, schema, ierr)
    type(river_pcoll), intent(in) :: pcoll
    type(river_schema), intent(out) :: schema
    integer, optional, intent(out) :: ierr
    type(c_ptr) :: borrowed, out
    integer(c_int) :: rc
    out = c_null_ptr
    rc = river_pcoll_schema_c(pcoll%ptr, borrowed)
    if (rc == RIVER_SUCCESS) rc = river_schema_clone_c(borrowed, out)
    if (rc == RIVER_SUCCESS) schema%ptr = out
    call river_check(rc, 'river_pcoll_schema', ierr)
  end subroutine river_pcoll_schema

  !> Partition p's (0-based) entry in the partition table (reader).
  subroutine river_pcoll_partition(pcoll, p, part, ierr)
    type(river_pcoll), intent(in) :: pcoll
    integer, intent(in) :: p
    type(river_pcoll_part), intent(out) :: part
    integer, optional, intent(out) :: ierr
    type(river_pcoll_part) :: cpart
    integer(c_int) :: rc
    rc = river_pcoll_partition_c(pcoll%ptr, int(p, c_int), cpart)
    if (rc == RIVER_SUCCESS) part = cpart
    call river_check(rc, 'river_pcoll_partition', ierr)
  end subroutine river_pcoll_partition

  !> The directory of disk d (0-based) under the collection's root.
  subroutine river_pcoll_disk_path(pcoll, d, path, ierr)
    type(river_pcoll), intent(in) :: pcoll
    integer, intent(in) :: d
    character(len=:), allocatable, intent(out) :: path
    integer, optional, intent(out) :: ierr
    integer(c_int) :: rc
    call fetch_string(4, path, rc, h=pcoll%ptr, d=d)
    call river_check(rc, 'river_pcoll_disk_path', ierr)
  end subroutine river_pcoll_disk_path

  !> Read block `block` of partition p (both 0-based) into buf, bufsize
  !> bytes (size(buf) * c_sizeof(buf(1)); at least records_per_block *
  !> record_size), verified; a bad copy is covered by a mirror. nrecords
  !> gets the block's record count.
  subroutine river_pcoll_read_block(pcoll, p, block, buf, bufsize, &
                                    nrecords, ierr)
    type(river_pcoll), intent(in) :: pcoll
    integer, intent(in) :: p
    integer(c_int64_t), intent(in) :: block
    type(*), intent(inout) :: buf(*)
    integer(c_size_t), intent(in) :: bufsize
    integer(c_size_t), intent(out) :: nrecords
    integer, optional, intent(out) :: ierr
    integer(c_size_t) :: n
    integer(c_int) :: rc
    rc = river_pcoll_read_block_c(pcoll%ptr, int(p, c_int), block, buf, &
                                  bufsize, n)
    if (rc == RIVER_SUCCESS) nrecords = n
    call river_check(rc, 'river_pcoll_read_block', ierr)
  end subroutine river_pcoll_read_block

  !> The records per block and the block count of partition p.
  subroutine river_pcoll_blocks(pcoll, p, records_per_block, nblocks, ierr)
    type(river_pcoll), intent(in) :: pcoll
    integer, intent(in) :: p
    integer(c_size_t), intent(out) :: records_per_block
    integer(c_int64_t), intent(out) :: nblocks
    integer, optional, intent(out) :: ierr
    integer(c_size_t) :: rpb
    integer(c_int64_t) :: nb
    integer(c_int) :: rc
    rc = river_pcoll_blocks_c(pcoll%ptr, int(p, c_int), rpb, nb)
    if (rc == RIVER_SUCCESS) then
      records_per_block = rpb
      nblocks = nb
    end if
    call river_check(rc, 'river_pcoll_blocks', ierr)
  end subroutine river_pcoll_blocks

  !> Check copy c of partition p (both 0-based) against the metadata and
  !> verify every block. On failure bad_block is the first damaged block
  !> (-1: the file as a whole is bad).
  subroutine river_pcoll_verify_copy(pcoll, p, c, bad_block, ierr)
    type(river_pcoll), intent(in) :: pcoll
    integer, intent(in) :: p, c
    integer(c_int64_t), optional, intent(out) :: bad_block
    integer, optional, intent(out) :: ierr
    integer(c_int64_t) :: bad
    integer(c_int) :: rc
    rc = river_pcoll_verify_copy_c(pcoll%ptr, int(p, c_int), int(c, c_int), &
                                   bad)
    if (rc /= RIVER_SUCCESS .and. present(bad_block)) bad_block = bad
    call river_check(rc, 'river_pcoll_verify_copy', ierr)
  end subroutine river_pcoll_verify_copy

  !> Remove collection `name` (metadata, then data files). Not
  !> collective: call on one rank. RIVER_ENOTFOUND if there is none.
  subroutine river_pcoll_remove(name, root, disks, ierr)
    character(len=*), intent(in) :: name
    character(len=*), optional, intent(in) :: root, disks
    integer, optional, intent(out) :: ierr
    type(pcoll_opts_c) :: opts
    character(kind=c_char), allocatable, target :: root_c(:), disks_c(:)
    if (present(root)) call c_str_ptr(root, root_c, opts%root)
    if (present(disks)) call c_str_ptr(disks, disks_c, opts%disks)
    call river_check(river_pcoll_remove_c(c_str(name), opts), &
                     'river_pcoll_remove', ierr)
  end subroutine river_pcoll_remove

  !> Check a collection name: RIVER_EINVAL (with a logged reason) unless
  !> it is 1..RIVER_PCOLL_NAME_MAX of letters, digits, '.', '_', '-', not
  !> starting with '.' and without "..".
  subroutine river_pcoll_check_name(name, ierr)
    character(len=*), intent(in) :: name
    integer, optional, intent(out) :: ierr
    call river_check(river_pcoll_check_name_c(c_str(name)), &
                     'river_pcoll_check_name', ierr)
  end subroutine river_pcoll_check_name

  ! ----------------------------------------------- gensort and checksums

  !> Fill buf (at least count * RIVER_GENSORT_RECORD_SIZE bytes) with
  !> gensort-layout records for rows first .. first+count-1. flags: 0 or
  !> a sum of RIVER_GENSORT_ASCII and RIVER_GENSORT_SKEW.
  subroutine river_gensort_fill(first, count, flags, seed, buf, ierr)
    integer(c_int64_t), intent(in) :: first, seed
    integer(c_size_t), intent(in) :: count
    integer, intent(in) :: flags
    type(*), intent(inout) :: buf(*)
    integer, optional, intent(out) :: ierr
    call river_check(river_gensort_fill_c(first, count, int(flags, c_int), &
                                          seed, buf), &
                     'river_gensort_fill', ierr)
  end subroutine river_gensort_fill

  !> Extend the CRC32C in crc with len bytes of buf (start from crc = 0;
  !> C's uint32_t, so values of 2**31 and above read negative).
  subroutine river_crc32c(buf, len, crc, ierr)
    type(*), intent(in) :: buf(*)
    integer(c_size_t), intent(in) :: len
    integer(c_int32_t), intent(inout) :: crc
    integer, optional, intent(out) :: ierr
    call river_check(river_crc32c_c(buf, len, crc), 'river_crc32c', ierr)
  end subroutine river_crc32c

  ! ------------------------------------------------- distributed queues

  !> Create a queue over comm (collective). role: RIVER_DQ_PRODUCER,
  !> RIVER_DQ_CONSUMER, both (ior) or 0. record_size in bytes (> 0, the
  !> same on every rank, e.g. c_sizeof(one_record)). Options (defaults as
  !> in C's river_dq_opts, the same on every rank): policy (RIVER_DQ_*,
  !> default RIVER_DQ_PUSH), credits (default RIVER_DQ_DEFAULT_CREDITS),
  !> message_size (bytes, default RIVER_DQ_DEFAULT_MESSAGE_SIZE), seed
  !> (for PUSH's random choices), and for RIVER_DQ_EXCHANGE partition (a
  !> bind(C) function with interface river_dq_partition_fn) and
  !> partition_ctx (passed to it).
  subroutine river_dq_create(comm, role, record_size, q, policy, credits, &
                             message_size, seed, partition, partition_ctx, &
                             ierr)
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
    type(dq_opts_c) :: opts
    type(c_ptr) :: out
    integer(c_int) :: rc
    if (present(policy)) opts%policy = int(policy, c_int)
    if (present(credits)) opts%credits = int(credits, c_int)
    if (present(message_size)) opts%message_size = message_size
    if (present(seed)) opts%seed = seed
    if (present(partition)) opts%partition = c_funloc(partition)
    if (present(partition_ctx)) opts%partition_ctx = partition_ctx
    out = c_null_ptr
    rc = river_dq_create_c(int(comm%MPI_VAL, c_int), int(role, c_int), &
                           record_size, opts, out)
    if (rc == RIVER_SUCCESS) then
      q%ptr = out
      q%record_size = record_size
    end if
    call river_check(rc, 'river_dq_create', ierr)
  end subroutine river_dq_create

  !> Put nrecords records from records (any array of at least nrecords *
  !> record_size bytes); blocks, without spinning, while the message
  !> being filled has nowhere to go.
  subroutine river_dq_put(q, records, nrecords, ierr)
    type(river_dq), intent(in) :: q
    type(*), intent(in) :: records(*)
    integer(c_size_t), intent(in) :: nrecords
    integer, optional, intent(out) :: ierr
    call river_check(river_dq_put_c(q%ptr, records, nrecords), &
                     'river_dq_put', ierr)
  end subroutine river_dq_put

  !> Like river_dq_put, but ierr RIVER_EAGAIN (none taken) instead of
  !> blocking; that is a status, not an error: without ierr it does not
  !> stop (so, without ierr, whether the records went cannot be told).
  !> RIVER_ENOBUFS: too many records for one try, put fewer.
  subroutine river_dq_try_put(q, records, nrecords, ierr)
    type(river_dq), intent(in) :: q
    type(*), intent(in) :: records(*)
    integer(c_size_t), intent(in) :: nrecords
    integer, optional, intent(out) :: ierr
    integer(c_int) :: rc
    rc = river_dq_try_put_c(q%ptr, records, nrecords)
    if (rc == RIVER_EAGAIN) then
      if (present(ierr)) ierr = RIVER_EAGAIN
      return
    end if
    call river_check(rc, 'river_dq_try_put', ierr)
  end subroutine river_dq_try_put

  !> Send what is buffered and end this producer's stream.
  !> Zero-copy put: buf points at room for max records in the message
  !> being filled (c_f_pointer makes it a Fortran array); write records
  !> there, then river_dq_commit(q, n) puts the first n. See dq.h.
  subroutine river_dq_reserve(q, buf, max, ierr)
    type(river_dq), intent(in) :: q
    type(c_ptr), intent(out) :: buf
    integer(c_size_t), intent(out) :: max
    integer, optional, intent(out) :: ierr
    call river_check(river_dq_reserve_c(q%ptr, buf, max), 'river_dq_reserve', &
                     ierr)
  end subroutine river_dq_reserve

  subroutine river_dq_commit(q, n, ierr)
    type(river_dq), intent(in) :: q
    integer(c_size_t), intent(in) :: n
    integer, optional, intent(out) :: ierr
    call river_check(river_dq_commit_c(q%ptr, n), 'river_dq_commit', ierr)
  end subroutine river_dq_commit

  subroutine river_dq_close(q, ierr)
    type(river_dq), intent(in) :: q
    integer, optional, intent(out) :: ierr
    call river_check(river_dq_close_c(q%ptr), 'river_dq_close', ierr)
  end subroutine river_dq_close

  ! Shared by the get variants: rc of get (blocking) or try_get; records,
  ! nrecords and from are set only on RIVER_SUCCESS.
  function dq_get_any(q, block, records, nrecords, from) result(rc)
    type(river_dq), intent(in) :: q
    logical, intent(in) :: block
    type(c_ptr), intent(out) :: records
    integer(c_size_t), intent(out) :: nrecords
    integer(c_int), intent(out) :: from
    integer(c_int) :: rc
    if (block) then
      rc = river_dq_get_c(q%ptr, records, nrecords, from)
    else
      rc = river_dq_try_get_c(q%ptr, records, nrecords, from)
    end if
  end function dq_get_any

  ! Shared by the borrowed variants of river_dq_get and river_dq_try_get.
  subroutine dq_get_ptr(q, block, what, records, nrecords, from, ierr)
    type(river_dq), intent(in) :: q
    logical, intent(in) :: block
    character(len=*), intent(in) :: what
    type(c_ptr), intent(out) :: records
    integer(c_size_t), intent(out) :: nrecords
    integer, optional, intent(out) :: from
    integer, optional, intent(out) :: ierr
    type(c_ptr) :: r
    integer(c_size_t) :: n
    integer(c_int) :: f, rc
    records = c_null_ptr
    nrecords = 0
    rc = dq_get_any(q, block, r, n, f)
    if (rc == RIVER_SUCCESS) then
      records = r
      nrecords = n
      if (present(from)) from = int(f)
    else if (rc == RIVER_EOS .or. rc == RIVER_EAGAIN) then
      if (present(ierr)) ierr = int(rc)
      return
    end if
    call river_check(rc, what, ierr)
  end subroutine dq_get_ptr

  ! Shared by the copying variants of river_dq_get and river_dq_try_get.
  subroutine dq_get_bytes(q, block, what, buf, nrecords, from, ierr)
    type(river_dq), intent(in) :: q
    logical, intent(in) :: block
    character(len=*), intent(in) :: what
    integer(c_int8_t), allocatable, intent(inout) :: buf(:)
    integer(c_size_t), intent(out) :: nrecords
    integer, optional, intent(out) :: from
    integer, optional, intent(out) :: ierr
    type(c_ptr) :: r
    integer(c_size_t) :: n, nbytes
    integer(c_int) :: f, rc
    nrecords = 0
    rc = dq_get_any(q, block, r, n, f)
    if (rc == RIVER_EOS .or. rc == RIVER_EAGAIN) then
      call bytes_from(c_null_ptr, 0_c_size_t, buf)
      if (present(ierr)) ierr = int(rc)
      return
    end if
    if (rc == RIVER_SUCCESS) then
      nbytes = n * q%record_size
      call bytes_from(r, nbytes, buf)
      nrecords = n
      if (present(from)) from = int(f)
    end if
    call river_check(rc, what, ierr)
  end subroutine dq_get_bytes

  !> river_dq_get, borrowed: records points at the next message's
  !> nrecords records (c_f_pointer makes them a Fortran array), valid
  !> until river_dq_release or the next get; from (optional) gets the
  !> producer index. After the end of every stream: records null,
  !> nrecords 0, ierr RIVER_EOS (not an error: without ierr this does
  !> not stop).
  subroutine river_dq_get_ptr(q, records, nrecords, from, ierr)
    type(river_dq), intent(in) :: q
    type(c_ptr), intent(out) :: records
    integer(c_size_t), intent(out) :: nrecords
    integer, optional, intent(out) :: from
    integer, optional, intent(out) :: ierr
    call dq_get_ptr(q, .true., 'river_dq_get', records, nrecords, from, ierr)
  end subroutine river_dq_get_ptr

  !> river_dq_get, copied: buf is (re)allocated to the next message's
  !> bytes (nrecords * record_size). The message itself stays held (its
  !> credit not returned) until river_dq_release or the next get. At the
  !> end: buf empty, nrecords 0, ierr RIVER_EOS (not an error).
  subroutine river_dq_get_bytes(q, buf, nrecords, from, ierr)
    type(river_dq), intent(in) :: q
    integer(c_int8_t), allocatable, intent(inout) :: buf(:)
    integer(c_size_t), intent(out) :: nrecords
    integer, optional, intent(out) :: from
    integer, optional, intent(out) :: ierr
    call dq_get_bytes(q, .true., 'river_dq_get', buf, nrecords, from, ierr)
  end subroutine river_dq_get_bytes

  !> river_dq_try_get, borrowed: as river_dq_get, but ierr RIVER_EAGAIN
  !> (records null, nrecords 0) if no message is ready; EAGAIN and EOS
  !> are statuses, not errors: without ierr this does not stop.
  subroutine river_dq_try_get_ptr(q, records, nrecords, from, ierr)
    type(river_dq), intent(in) :: q
    type(c_ptr), intent(out) :: records
    integer(c_size_t), intent(out) :: nrecords
    integer, optional, intent(out) :: from
    integer, optional, intent(out) :: ierr
    call dq_get_ptr(q, .false., 'river_dq_try_get', records, nrecords, &
                    from, ierr)
  end subroutine river_dq_try_get_ptr

  !> river_dq_try_get, copied (see river_dq_get_bytes); RIVER_EAGAIN
  !> leaves buf empty.
  subroutine river_dq_try_get_bytes(q, buf, nrecords, from, ierr)
    type(river_dq), intent(in) :: q
    integer(c_int8_t), allocatable, intent(inout) :: buf(:)
    integer(c_size_t), intent(out) :: nrecords
    integer, optional, intent(out) :: from
    integer, optional, intent(out) :: ierr
    call dq_get_bytes(q, .false., 'river_dq_try_get', buf, nrecords, from, &
                      ierr)
  end subroutine river_dq_try_get_bytes

  !> Give back the message from the last get (no-op if none is held).
  subroutine river_dq_release(q, ierr)
    type(river_dq), intent(in) :: q
    integer, optional, intent(out) :: ierr
    call river_check(river_dq_release_c(q%ptr), 'river_dq_release', ierr)
  end subroutine river_dq_release

  !> RIVER_DQ_PULL, producer: end the current unit (the records put since
  !> the last end_unit or create), waiting without spinning for a
  !> consumer to claim it and for that consumer's credit; no records
  !> since the last end_unit is a no-op. RIVER_EINVAL on a queue of
  !> another policy or a rank that is not a producer.
  subroutine river_dq_end_unit(q, ierr)
    type(river_dq), intent(in) :: q
    integer, optional, intent(out) :: ierr
    call river_check(river_dq_end_unit_c(q%ptr), 'river_dq_end_unit', ierr)
  end subroutine river_dq_end_unit

  !> RIVER_DQ_PULL, consumer: the unit of the message from the last
  !> successful get: unit is its global id, ishft(producer index,
  !> RIVER_DQ_UNIT_SHIFT) + its number within that producer; first and
  !> last tell whether the message is the unit's first or last.
  !> RIVER_ESTATE before the first message.
  subroutine river_dq_unit(q, unit, first, last, ierr)
    type(river_dq), intent(in) :: q
    integer(c_int64_t), intent(out) :: unit
    logical, optional, intent(out) :: first, last
    integer, optional, intent(out) :: ierr
    integer(c_int64_t) :: u
    integer(c_int) :: f, l, rc
    rc = river_dq_unit_c(q%ptr, u, f, l)
    if (rc == RIVER_SUCCESS) then
      unit = u
      if (present(first)) first = f /= 0
      if (present(last)) last = l /= 0
    end if
    call river_check(rc, 'river_dq_unit', ierr)
  end subroutine river_dq_unit

  !> This rank's counters so far.
  subroutine river_dq_stats_get(q, stats, ierr)
    type(river_dq), intent(in) :: q
    type(river_dq_stats), intent(out) :: stats
    integer, optional, intent(out) :: ierr
    type(river_dq_stats) :: s
    integer(c_int) :: rc
    rc = river_dq_stats_get_c(q%ptr, s)
    if (rc == RIVER_SUCCESS) stats = s
    call river_check(rc, 'river_dq_stats_get', ierr)
  end subroutine river_dq_stats_get

  !> Free the queue (collective over its communicator); q becomes null
  !> whatever the result. RIVER_ESTATE if a producer had not closed or a
  !> consumer had not seen RIVER_EOS (on every rank alike).
  subroutine river_dq_destroy(q, ierr)
    type(river_dq), intent(inout) :: q
    integer, optional, intent(out) :: ierr
    integer(c_int) :: rc
    rc = river_dq_destroy_c(q%ptr)
    q%ptr = c_null_ptr
    q%record_size = 0
    call river_check(rc, 'river_dq_destroy', ierr)
  end subroutine river_dq_destroy

  ! ------------------------------------------- graduated declustering

  ! A copy of ranks (or none) as a C int array of at least n entries, the
  ! ones past the end of ranks -1, so that C, which reads n entries,
  ! never reads past the copy and rejects a short array (RIVER_EINVAL,
  ! on every rank) instead.
  subroutine gd_rank_array(ranks, n, copy, ptr)
    integer, optional, intent(in) :: ranks(:)
    integer, intent(in) :: n
    integer(c_int), allocatable, target, intent(inout) :: copy(:)
    type(c_ptr), intent(inout) :: ptr
    if (.not. present(ranks)) return
    allocate(copy(max(size(ranks), n, 1)))
    copy = -1_c_int
    copy(1:size(ranks)) = int(ranks, c_int)
    ptr = c_loc(copy)
  end subroutine gd_rank_array

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
  subroutine river_gd_open(comm, pc, gd, policy, mode, outstanding, window, &
                           disk_ranks, client_ranks, disk_rate, &
                           seek_seconds, perturb, ierr)
    type(MPI_Comm), intent(in) :: comm
    type(river_pcoll), intent(in) :: pc
    type(river_gd), intent(out) :: gd
    integer, optional, intent(in) :: policy, mode, outstanding, window
    integer, optional, intent(in) :: disk_ranks(:), client_ranks(:)
    real(c_double), optional, intent(in) :: disk_rate, seek_seconds
    type(river_perturb), optional, intent(in) :: perturb
    integer, optional, intent(out) :: ierr
    type(gd_opts_c) :: opts
    type(river_pcoll_info) :: info
    integer(c_int), allocatable, target :: dr(:), cr(:)
    type(c_ptr) :: out
    integer(c_int) :: rc
    ! The layout sizes the rank arrays and the copying river_gd_next. A
    ! handle that is not a reader fails in river_gd_open on every rank.
    if (river_pcoll_info_get_c(pc%ptr, info) /= RIVER_SUCCESS) &
      info = river_pcoll_info()
    if (present(policy)) opts%policy = int(policy, c_int)
    if (present(mode)) opts%mode = int(mode, c_int)
    if (present(outstanding)) opts%outstanding = int(outstanding, c_int)
    if (present(window)) opts%window = int(window, c_int)
    call gd_rank_array(disk_ranks, int(info%ndisks), dr, opts%disk_ranks)
    call gd_rank_array(client_ranks, int(info%npartitions), cr, &
                       opts%client_ranks)
    if (present(disk_rate)) opts%disk_rate = disk_rate
    if (present(seek_seconds)) opts%seek_seconds = seek_seconds
    if (present(perturb)) opts%perturb = perturb%ptr
    out = c_null_ptr
    rc = river_gd_open_c(int(comm%MPI_VAL, c_int), pc%ptr, opts, out)
    if (rc == RIVER_SUCCESS) then
      gd%ptr = out
      gd%record_size = info%record_size
    end if
    call river_check(rc, 'river_gd_open', ierr)
  end subroutine river_gd_open

  ! Shared by the river_gd_next variants: rc of river_gd_next; records,
  ! nrecords, partition and block are set only on RIVER_SUCCESS.
  function gd_next_any(gd, records, nrecords, partition, block) result(rc)
    type(river_gd), intent(in) :: gd
    type(c_ptr), intent(out) :: records
    integer(c_size_t), intent(out) :: nrecords
    integer, optional, intent(out) :: partition
    integer(c_int64_t), optional, intent(out) :: block
    integer(c_int) :: rc, p
    integer(c_int64_t) :: b
    records = c_null_ptr
    nrecords = 0
    rc = river_gd_next_c(gd%ptr, records, nrecords, p, b)
    if (rc == RIVER_SUCCESS) then
      if (present(partition)) partition = int(p)
      if (present(block)) block = b
    else
      records = c_null_ptr
      nrecords = 0
    end if
  end function gd_next_any

  !> river_gd_next, borrowed: records points at nrecords records of
  !> partition `partition`, block `block` (both 0-based, as in C; block is
  !> the block's index within its partition), valid until the next
  !> river_gd_next or river_gd_close (c_f_pointer makes them a Fortran
  !> array). A rank serving disks keeps serving inside this call until
  !> every client is done: call it on every rank until it gives RIVER_EOS
  !> (records null, nrecords 0; a status, not an error: without ierr this
  !> does not stop) or an error, then river_gd_close.
  subroutine river_gd_next_ptr(gd, records, nrecords, partition, block, ierr)
    type(river_gd), intent(in) :: gd
    type(c_ptr), intent(out) :: records
    integer(c_size_t), intent(out) :: nrecords
    integer, optional, intent(out) :: partition
    integer(c_int64_t), optional, intent(out) :: block
    integer, optional, intent(out) :: ierr
    integer(c_int) :: rc
    rc = gd_next_any(gd, records, nrecords, partition, block)
    if (rc == RIVER_EOS) then
      if (present(ierr)) ierr = RIVER_EOS
      return
    end if
    call river_check(rc, 'river_gd_next', ierr)
  end subroutine river_gd_next_ptr

  !> river_gd_next, copied: buf is (re)allocated to the block's bytes
  !> (nrecords * record_size; transfer() turns them into records);
  !> partition and block as for the borrowed variant. At the end: buf
  !> empty, nrecords 0, ierr RIVER_EOS (not an error).
  subroutine river_gd_next_bytes(gd, buf, nrecords, partition, block, ierr)
    type(river_gd), intent(in) :: gd
    integer(c_int8_t), allocatable, intent(inout) :: buf(:)
    integer(c_size_t), intent(out) :: nrecords
    integer, optional, intent(out) :: partition
    integer(c_int64_t), optional, intent(out) :: block
    integer, optional, intent(out) :: ierr
    type(c_ptr) :: r
    integer(c_size_t) :: n, nbytes
    integer(c_int) :: rc
    rc = gd_next_any(gd, r, n, partition, block)
    nrecords = 0
    if (rc /= RIVER_SUCCESS) then
      call bytes_from(c_null_ptr, 0_c_size_t, buf)
      if (rc == RIVER_EOS) then
        if (present(ierr)) ierr = RIVER_EOS
        return
      end if
    else
      nbytes = n * gd%record_size
      call bytes_from(r, nbytes, buf)
      nrecords = n
    end if
    call river_check(rc, 'river_gd_next', ierr)
  end subroutine river_gd_next_bytes

  !> This rank's counters so far.
  subroutine river_gd_stats_get(gd, stats, ierr)
    type(river_gd), intent(in) :: gd
    type(river_gd_stats), intent(out) :: stats
    integer, optional, intent(out) :: ierr
    type(river_gd_stats) :: s
    integer(c_int) :: rc
    rc = river_gd_stats_get_c(gd%ptr, s)
    if (rc == RIVER_SUCCESS) stats = s
    call river_check(rc, 'river_gd_stats_get', ierr)
  end subroutine river_gd_stats_get

  !> Finish the read (collective over river_gd_open's comm): the first
  !> error any rank met, the same on every rank. gd becomes null
  !> whatever the result; a null gd is a no-op (and then not collective).
  !> Call river_gd_next until it gives something other than
  !> RIVER_SUCCESS first.
  subroutine river_gd_close(gd, ierr)
    type(river_gd), intent(inout) :: gd
    integer, optional, intent(out) :: ierr
    integer(c_int) :: rc
    rc = river_gd_close_c(gd%ptr)
    gd%ptr = c_null_ptr
    gd%record_size = 0
    call river_check(rc, 'river_gd_close', ierr)
  end subroutine river_gd_close

  !> The fluid ideal of a GD read of n partitions on n disks with chained
  !> replication r, disk d (0-based) delivering rates(d+1) bytes/s: the
  !> rate per_client every client gets and the total n * per_client.
  !> RIVER_EINVAL for n < 1, r outside 1..n, a negative rate or fewer
  !> than n rates.
  subroutine river_gd_fluid_ideal(rates, n, r, per_client, total, ierr)
    real(c_double), intent(in) :: rates(:)
    integer, intent(in) :: n, r
    real(c_double), optional, intent(out) :: per_client, total
    integer, optional, intent(out) :: ierr
    real(c_double) :: pc, tot
    integer(c_int) :: rc
    if (n > size(rates)) then
      rc = RIVER_EINVAL
    else
      rc = river_gd_fluid_ideal_c(rates, int(n, c_int), int(r, c_int), pc, &
                                  tot)
    end if
    if (rc == RIVER_SUCCESS) then
      if (present(per_client)) per_client = pc
      if (present(total)) total = tot
    end if
    call river_check(rc, 'river_gd_fluid_ideal', ierr)
  end subroutine river_gd_fluid_ideal

  ! ------------------------------------------------- throttle, perturbation

  !> A token bucket of rate bytes/s (> 0) with a burst of burst bytes
  !> (default, or 0: rate/20, at least 64 KiB); it starts full.
  subroutine river_throttle_create(rate, t, burst, ierr)
    real(c_double), intent(in) :: rate
    type(river_throttle), intent(out) :: t
    real(c_double), optional, intent(in) :: burst
    integer, optional, intent(out) :: ierr
    real(c_double) :: b
    type(c_ptr) :: out
    integer(c_int) :: rc
    b = 0.0_c_double
    if (present(burst)) b = burst
    out = c_null_ptr
    rc = river_throttle_create_c(rate, b, out)
    if (rc == RIVER_SUCCESS) t%ptr = out
    call river_check(rc, 'river_throttle_create', ierr)
  end subroutine river_throttle_create

  !> Free t and make it null; a null t is left alone.
  subroutine river_throttle_destroy(t)
    type(river_throttle), intent(inout) :: t
    call river_throttle_destroy_c(t%ptr)
    t%ptr = c_null_ptr
  end subroutine river_throttle_destroy

  !> Account for bytes of work: returns once the bucket has had the
  !> tokens (sleeping, never spinning).
  subroutine river_throttle_consume(t, bytes, ierr)
    type(river_throttle), intent(in) :: t
    integer(c_size_t), intent(in) :: bytes
    integer, optional, intent(out) :: ierr
    call river_check(river_throttle_consume_c(t%ptr, bytes), &
                     'river_throttle_consume', ierr)
  end subroutine river_throttle_consume

  !> Multiply the nominal rate by factor (> 0) from now on.
  subroutine river_throttle_set_factor(t, factor, ierr)
    type(river_throttle), intent(in) :: t
    real(c_double), intent(in) :: factor
    integer, optional, intent(out) :: ierr
    call river_check(river_throttle_set_factor_c(t%ptr, factor), &
                     'river_throttle_set_factor', ierr)
  end subroutine river_throttle_set_factor

  !> The effective rate (nominal x factor), bytes/s.
  subroutine river_throttle_rate(t, rate, ierr)
    type(river_throttle), intent(in) :: t
    real(c_double), intent(out) :: rate
    integer, optional, intent(out) :: ierr
    real(c_double) :: r
    integer(c_int) :: rc
    rc = river_throttle_rate_c(t%ptr, r)
    if (rc == RIVER_SUCCESS) rate = r
    call river_check(rc, 'river_throttle_rate', ierr)
  end subroutine river_throttle_rate

  !> Seconds river_throttle_consume has spent sleeping so far.
  subroutine river_throttle_slept(t, seconds, ierr)
    type(river_throttle), intent(in) :: t
    real(c_double), intent(out) :: seconds
    integer, optional, intent(out) :: ierr
    real(c_double) :: s
    integer(c_int) :: rc
    rc = river_throttle_slept_c(t%ptr, s)
    if (rc == RIVER_SUCCESS) seconds = s
    call river_check(rc, 'river_throttle_slept', ierr)
  end subroutine river_throttle_slept

  !> Parse a perturbation spec ("KIND:INDICES=FACTOR[@TIME][;...]", see
  !> river/throttle.h); bad text is RIVER_EFORMAT (with a logged reason).
  subroutine river_perturb_parse(spec, p, ierr)
    character(len=*), intent(in) :: spec
    type(river_perturb), intent(out) :: p
    integer, optional, intent(out) :: ierr
    type(c_ptr) :: out
    integer(c_int) :: rc
    out = c_null_ptr
    rc = river_perturb_parse_c(c_str(spec), out)
    if (rc == RIVER_SUCCESS) p%ptr = out
    call river_check(rc, 'river_perturb_parse', ierr)
  end subroutine river_perturb_parse

  !> Free p and make it null; a null p is left alone.
  subroutine river_perturb_destroy(p)
    type(river_perturb), intent(inout) :: p
    call river_perturb_destroy_c(p%ptr)
    p%ptr = c_null_ptr
  end subroutine river_perturb_destroy

  !> The factor for (kind, index) t seconds into the run (kind:
  !> RIVER_PERTURB_DISK or RIVER_PERTURB_CPU): the last clause naming
  !> index whose start is <= t, or 1.
  subroutine river_perturb_factor(p, kind, index, t, factor, ierr)
    type(river_perturb), intent(in) :: p
    integer, intent(in) :: kind, index
    real(c_double), intent(in) :: t
    real(c_double), intent(out) :: factor
    integer, optional, intent(out) :: ierr
    real(c_double) :: f
    integer(c_int) :: rc
    rc = river_perturb_factor_c(p%ptr, int(kind, c_int), int(index, c_int), &
                                t, f)
    if (rc == RIVER_SUCCESS) factor = f
    call river_check(rc, 'river_perturb_factor', ierr)
  end subroutine river_perturb_factor

  !> The number of distinct indices of kind with a factor /= 1 at any time.
  subroutine river_perturb_count(p, kind, k, ierr)
    type(river_perturb), intent(in) :: p
    integer, intent(in) :: kind
    integer, intent(out) :: k
    integer, optional, intent(out) :: ierr
    integer(c_int) :: n, rc
    rc = river_perturb_count_c(p%ptr, int(kind, c_int), n)
    if (rc == RIVER_SUCCESS) k = int(n)
    call river_check(rc, 'river_perturb_count', ierr)
  end subroutine river_perturb_count

  !> The largest index of kind named by any clause, or -1 if none.
  subroutine river_perturb_max_index(p, kind, max_index, ierr)
    type(river_perturb), intent(in) :: p
    integer, intent(in) :: kind
    integer, intent(out) :: max_index
    integer, optional, intent(out) :: ierr
    integer(c_int) :: m, rc
    rc = river_perturb_max_index_c(p%ptr, int(kind, c_int), m)
    if (rc == RIVER_SUCCESS) max_index = int(m)
    call river_check(rc, 'river_perturb_max_index', ierr)
  end subroutine river_perturb_max_index

  !> Start a thread stealing fraction (0 < fraction < 1) of this
  !> process's core (RIVER_ETOPO if hwloc cannot bind it).
  subroutine river_cpu_hog_start(fraction, h, ierr)
    real(c_double), intent(in) :: fraction
    type(river_cpu_hog), intent(out) :: h
    integer, optional, intent(out) :: ierr
    type(c_ptr) :: out
    integer(c_int) :: rc
    out = c_null_ptr
    rc = river_cpu_hog_start_c(fraction, out)
    if (rc == RIVER_SUCCESS) h%ptr = out
    call river_check(rc, 'river_cpu_hog_start', ierr)
  end subroutine river_cpu_hog_start

  !> Stop and join the thread; h becomes null (a null h is a no-op).
  subroutine river_cpu_hog_stop(h, ierr)
    type(river_cpu_hog), intent(inout) :: h
    integer, optional, intent(out) :: ierr
    integer(c_int) :: rc
    rc = river_cpu_hog_stop_c(h%ptr)
    h%ptr = c_null_ptr
    call river_check(rc, 'river_cpu_hog_stop', ierr)
  end subroutine river_cpu_hog_stop

end module river
