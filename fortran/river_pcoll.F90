! river_pcoll.F90 - submodule river_pcoll_impl of module river: parallel
! collections (river/pcoll.h). Each call passes its handle's c_ptr to C;
! create, open, remove, root and list build C's river_pcoll_opts
! (pcoll_opts_c) from their optional arguments, with NUL-terminated
! copies of the strings that live for the call. A river_pcoll_order
! keeps the record size beside its C handle, which sizes the bytes the
! copying add and flush hand back.
submodule (river) river_pcoll_impl
  implicit none

  ! C's river_pcoll_opts, built from optional arguments; the strings
  ! point into NUL-terminated copies that live for the call.
  type, bind(C) :: pcoll_opts_c
    type(c_ptr) :: root = c_null_ptr
    type(c_ptr) :: disks = c_null_ptr
    integer(c_int) :: ndisks = 0
    integer(c_int) :: replication = 0
    integer(c_int) :: layout = RIVER_LAYOUT_PARTITIONED
    integer(c_size_t) :: block_size = 0
    integer(c_int) :: ordered = 0
    integer(c_int) :: direct_io = 0
    integer(c_int) :: hold = RIVER_PCOLL_HOLD_SERVED
    integer(c_int) :: exclusive = 0
  end type pcoll_opts_c

  ! pcoll_opts_c must be the size of C's river_pcoll_opts (see layout_ok
  ! in river).
  integer, parameter :: opts_layout_ok = 1 / merge(1, 0, &
      c_sizeof(pcoll_opts_c()) == RIVER__SIZEOF_PCOLL_OPTS)

  interface
    ! create and open go through shims: comm is an MPI_Fint.
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
      type(c_ptr), value :: records
      integer(c_size_t), value :: nrecords
      integer(c_int) :: river_pcoll_write_c
    end function river_pcoll_write_c
    function pcoll_record_size_c(pc) bind(C, name='river__f_pcoll_record_size')
      import :: c_ptr, c_size_t
      type(c_ptr), value :: pc
      integer(c_size_t) :: pcoll_record_size_c
    end function pcoll_record_size_c
    function river_pcoll_begin_partition_c(pc, order) &
        bind(C, name='river_pcoll_begin_partition')
      import :: c_int, c_ptr, c_int64_t
      type(c_ptr), value :: pc
      integer(c_int64_t), value :: order
      integer(c_int) :: river_pcoll_begin_partition_c
    end function river_pcoll_begin_partition_c
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
      type(c_ptr), value :: buf
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
    function river_pcoll_verify_blocks_c(pc, p, c, bad, nblocks, nbad) &
        bind(C, name='river_pcoll_verify_blocks')
      import :: c_int, c_ptr, c_int8_t, c_int64_t
      type(c_ptr), value :: pc
      integer(c_int), value :: p, c
      integer(c_int8_t), intent(out) :: bad(*)
      integer(c_int64_t), value :: nblocks
      integer(c_int64_t), intent(out) :: nbad
      integer(c_int) :: river_pcoll_verify_blocks_c
    end function river_pcoll_verify_blocks_c
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
    function river_pcoll_remove_all_c(comm, name, opts) &
        bind(C, name='river__f_pcoll_remove_all')
      import :: c_int, c_char, pcoll_opts_c
      integer(c_int), value :: comm
      character(kind=c_char), intent(in) :: name(*)
      type(pcoll_opts_c), intent(in) :: opts
      integer(c_int) :: river_pcoll_remove_all_c
    end function river_pcoll_remove_all_c
    function river_pcoll_gc_c(opts, remove, report, arg, nfiles, nbytes) &
        bind(C, name='river_pcoll_gc')
      import :: c_int, c_ptr, c_funptr, c_int64_t, pcoll_opts_c
      type(pcoll_opts_c), intent(in) :: opts
      integer(c_int), value :: remove
      type(c_funptr), value :: report
      type(c_ptr), value :: arg
      integer(c_int64_t), intent(out) :: nfiles, nbytes
      integer(c_int) :: river_pcoll_gc_c
    end function river_pcoll_gc_c
    function river_pcoll_purge_c(name, opts, report, arg, nfiles, nbytes) &
        bind(C, name='river_pcoll_purge')
      import :: c_int, c_char, c_ptr, c_funptr, c_int64_t, pcoll_opts_c
      character(kind=c_char), intent(in) :: name(*)
      type(pcoll_opts_c), intent(in) :: opts
      type(c_funptr), value :: report
      type(c_ptr), value :: arg
      integer(c_int64_t), intent(out) :: nfiles, nbytes
      integer(c_int) :: river_pcoll_purge_c
    end function river_pcoll_purge_c
    function river_pcoll_check_name_c(name) &
        bind(C, name='river_pcoll_check_name')
      import :: c_int, c_char
      character(kind=c_char), intent(in) :: name(*)
      integer(c_int) :: river_pcoll_check_name_c
    end function river_pcoll_check_name_c
    function river_pcoll_copy_disk_c(pc, p, c, disk) &
        bind(C, name='river_pcoll_copy_disk')
      import :: c_int, c_ptr
      type(c_ptr), value :: pc
      integer(c_int), value :: p, c
      integer(c_int), intent(out) :: disk
      integer(c_int) :: river_pcoll_copy_disk_c
    end function river_pcoll_copy_disk_c
    function river_pcoll_node_local_c(pc, local) &
        bind(C, name='river_pcoll_node_local')
      import :: c_int, c_ptr
      type(c_ptr), value :: pc
      integer(c_int), intent(out) :: local
      integer(c_int) :: river_pcoll_node_local_c
    end function river_pcoll_node_local_c
    ! comm is an MPI_Fint: through a shim.
    function river_pcoll_hold_partitions_c(pc, parts, nparts) &
        bind(C, name='river_pcoll_hold_partitions')
      import :: c_int, c_ptr
      type(c_ptr), value :: pc
      integer(c_int), intent(in) :: parts(*)
      integer(c_int), value :: nparts
      integer(c_int) :: river_pcoll_hold_partitions_c
    end function river_pcoll_hold_partitions_c
    function river_pcoll_disk_ranks_c(comm, pc, ranks) &
        bind(C, name='river__f_pcoll_disk_ranks')
      import :: c_int, c_ptr
      integer(c_int), value :: comm
      type(c_ptr), value :: pc
      integer(c_int), intent(out) :: ranks(*)
      integer(c_int) :: river_pcoll_disk_ranks_c
    end function river_pcoll_disk_ranks_c
    ! root and list: opts is a c_ptr to a pcoll_opts_c (or null) so that
    ! it can travel through fetch_string's handle.
    function river_pcoll_root_c(opts, buf, len) bind(C, name='river_pcoll_root')
      import :: c_int, c_ptr, c_char, c_size_t
      type(c_ptr), value :: opts
      character(kind=c_char), intent(out) :: buf(*)
      integer(c_size_t), intent(inout) :: len
      integer(c_int) :: river_pcoll_root_c
    end function river_pcoll_root_c
    function river_pcoll_disk_dir_c(opts, d, buf, len) &
        bind(C, name='river_pcoll_disk_dir')
      import :: c_int, c_ptr, c_char, c_size_t
      type(c_ptr), value :: opts
      integer(c_int), value :: d
      character(kind=c_char), intent(out) :: buf(*)
      integer(c_size_t), intent(inout) :: len
      integer(c_int) :: river_pcoll_disk_dir_c
    end function river_pcoll_disk_dir_c
    function river_pcoll_list_c(opts, buf, len, count) &
        bind(C, name='river_pcoll_list')
      import :: c_int, c_ptr, c_char, c_size_t
      type(c_ptr), value :: opts
      character(kind=c_char), intent(out) :: buf(*)
      integer(c_size_t), intent(inout) :: len
      integer(c_int), intent(out) :: count
      integer(c_int) :: river_pcoll_list_c
    end function river_pcoll_list_c
    function river_pcoll_split_c(layout, nrecords, npartitions, p, first, &
                                 stride, count) &
        bind(C, name='river_pcoll_split')
      import :: c_int, c_int64_t
      integer(c_int), value :: layout
      integer(c_int64_t), value :: nrecords
      integer(c_int), value :: npartitions, p
      integer(c_int64_t), intent(out) :: first, stride, count
      integer(c_int) :: river_pcoll_split_c
    end function river_pcoll_split_c
    function river_pcoll_order_create_c(pc, out) &
        bind(C, name='river_pcoll_order_create')
      import :: c_int, c_ptr
      type(c_ptr), value :: pc
      type(c_ptr), intent(out) :: out
      integer(c_int) :: river_pcoll_order_create_c
    end function river_pcoll_order_create_c
    function river_pcoll_order_add_c(o, p, block, records, nrecords, ready, &
                                     nready) &
        bind(C, name='river_pcoll_order_add')
      import :: c_int, c_ptr, c_int64_t, c_size_t
      type(c_ptr), value :: o
      integer(c_int), value :: p
      integer(c_int64_t), value :: block
      type(c_ptr), value :: records
      integer(c_size_t), value :: nrecords
      type(c_ptr), intent(out) :: ready
      integer(c_size_t), intent(out) :: nready
      integer(c_int) :: river_pcoll_order_add_c
    end function river_pcoll_order_add_c
    function river_pcoll_order_flush_c(o, ready, nready) &
        bind(C, name='river_pcoll_order_flush')
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: o
      type(c_ptr), intent(out) :: ready
      integer(c_size_t), intent(out) :: nready
      integer(c_int) :: river_pcoll_order_flush_c
    end function river_pcoll_order_flush_c
    function river_pcoll_order_destroy_c(o) &
        bind(C, name='river_pcoll_order_destroy')
      import :: c_int, c_ptr
      type(c_ptr), value :: o
      integer(c_int) :: river_pcoll_order_destroy_c
    end function river_pcoll_order_destroy_c
  end interface

contains

  ! string_fill wrappers for fetch_string: the directory of disk d of
  ! parallel collection h; the root, and the collections under it, that
  ! the options at h (a pcoll_opts_c, or null) select (d unused).
  function disk_path_fill(h, d, buf, len) result(rc)
    type(c_ptr), intent(in) :: h
    integer(c_int), intent(in) :: d
    character(kind=c_char), intent(out) :: buf(*)
    integer(c_size_t), intent(inout) :: len
    integer(c_int) :: rc
    rc = river_pcoll_disk_path_c(h, d, buf, len)
  end function disk_path_fill

  function root_fill(h, d, buf, len) result(rc)
    type(c_ptr), intent(in) :: h
    integer(c_int), intent(in) :: d
    character(kind=c_char), intent(out) :: buf(*)
    integer(c_size_t), intent(inout) :: len
    integer(c_int) :: rc
    rc = river_pcoll_root_c(h, buf, len)
  end function root_fill

  function disk_dir_fill(h, d, buf, len) result(rc)
    type(c_ptr), intent(in) :: h
    integer(c_int), intent(in) :: d
    character(kind=c_char), intent(out) :: buf(*)
    integer(c_size_t), intent(inout) :: len
    integer(c_int) :: rc
    rc = river_pcoll_disk_dir_c(h, d, buf, len)
  end function disk_dir_fill

  function list_fill(h, d, buf, len) result(rc)
    type(c_ptr), intent(in) :: h
    integer(c_int), intent(in) :: d
    character(kind=c_char), intent(out) :: buf(*)
    integer(c_size_t), intent(inout) :: len
    integer(c_int) :: rc, count
    rc = river_pcoll_list_c(h, buf, len, count)
  end function list_fill

  ! The records a river_pcoll_order hands out: rc of the C call, with
  ! ready null and nready 0 unless it succeeded.
  subroutine order_result(rc, r, n, ready, nready)
    integer(c_int), intent(in) :: rc
    type(c_ptr), intent(in) :: r
    integer(c_size_t), intent(in) :: n
    type(c_ptr), intent(out) :: ready
    integer(c_size_t), intent(out) :: nready
    ready = c_null_ptr
    nready = 0
    if (rc /= RIVER_SUCCESS) return
    ready = r
    nready = n
  end subroutine order_result

  ! ------------------------------------------------ writing and reading

  module procedure river_pcoll_create
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
    if (present(exclusive)) opts%exclusive = merge(1, 0, exclusive)
    out = c_null_ptr
    rc = river_pcoll_create_c(int(comm%MPI_VAL, c_int), c_str(name), &
                              schema%ptr, opts, out)
    if (rc == RIVER_SUCCESS) pcoll%ptr = out
    call river_check(rc, 'river_pcoll_create', ierr)
  end procedure river_pcoll_create

  module procedure river_pcoll_write
    type(c_ptr) :: base
    integer(c_int) :: rc
    rc = river_f_records(records, nrecords, pcoll_record_size_c(pcoll%ptr), &
                         c_str('river_pcoll_write'), base)
    if (rc == RIVER_SUCCESS) rc = river_pcoll_write_c(pcoll%ptr, base, nrecords)
    call river_check(rc, 'river_pcoll_write', ierr)
  end procedure river_pcoll_write

  module procedure river_pcoll_begin_partition
    call river_check(river_pcoll_begin_partition_c(pcoll%ptr, order), &
                     'river_pcoll_begin_partition', ierr)
  end procedure river_pcoll_begin_partition

  module procedure river_pcoll_commit
    integer(c_int) :: rc
    rc = river_pcoll_commit_c(pcoll%ptr)
    if (rc /= RIVER_EINVAL) pcoll%ptr = c_null_ptr
    call river_check(rc, 'river_pcoll_commit', ierr)
  end procedure river_pcoll_commit

  module procedure river_pcoll_open
    type(pcoll_opts_c) :: opts
    character(kind=c_char), allocatable, target :: root_c(:), disks_c(:)
    type(c_ptr) :: out
    integer(c_int) :: rc
    if (present(root)) call c_str_ptr(root, root_c, opts%root)
    if (present(disks)) call c_str_ptr(disks, disks_c, opts%disks)
    if (present(direct_io)) opts%direct_io = merge(1, 0, direct_io)
    if (present(hold)) opts%hold = int(hold, c_int)
    out = c_null_ptr
    rc = river_pcoll_open_c(int(comm%MPI_VAL, c_int), c_str(name), opts, out)
    if (rc == RIVER_SUCCESS) pcoll%ptr = out
    call river_check(rc, 'river_pcoll_open', ierr)
  end procedure river_pcoll_open

  module procedure river_pcoll_hold_partitions
    integer(c_int), allocatable :: cparts(:)
    allocate(cparts(max(size(parts), 1)))
    cparts(1:size(parts)) = int(parts, c_int)
    call river_check(river_pcoll_hold_partitions_c(pcoll%ptr, cparts, &
                                                   int(size(parts), c_int)), &
                     'river_pcoll_hold_partitions', ierr)
  end procedure river_pcoll_hold_partitions

  module procedure river_pcoll_close
    integer(c_int) :: rc
    rc = river_pcoll_close_c(pcoll%ptr)
    pcoll%ptr = c_null_ptr
    call river_check(rc, 'river_pcoll_close', ierr)
  end procedure river_pcoll_close

  module procedure river_pcoll_info_get
    type(river_pcoll_info) :: cinfo
    integer(c_int) :: rc
    rc = river_pcoll_info_get_c(pcoll%ptr, cinfo)
    if (rc == RIVER_SUCCESS) info = cinfo
    call river_check(rc, 'river_pcoll_info_get', ierr)
  end procedure river_pcoll_info_get

  module procedure river_pcoll_schema
    type(river_schema) :: borrowed
    type(c_ptr) :: cs
    integer(c_int) :: rc
    integer :: clone_rc
    rc = river_pcoll_schema_c(pcoll%ptr, cs)
    if (rc == RIVER_SUCCESS) then
      borrowed%ptr = cs
      call river_schema_clone(borrowed, schema, clone_rc)
      rc = int(clone_rc, c_int)
    end if
    call river_check(rc, 'river_pcoll_schema', ierr)
  end procedure river_pcoll_schema

  module procedure river_pcoll_partition
    type(river_pcoll_part) :: cpart
    integer(c_int) :: rc
    rc = river_pcoll_partition_c(pcoll%ptr, int(p, c_int), cpart)
    if (rc == RIVER_SUCCESS) part = cpart
    call river_check(rc, 'river_pcoll_partition', ierr)
  end procedure river_pcoll_partition

  module procedure river_pcoll_disk_path
    integer(c_int) :: rc
    call fetch_string(disk_path_fill, pcoll%ptr, int(d, c_int), path, rc)
    call river_check(rc, 'river_pcoll_disk_path', ierr)
  end procedure river_pcoll_disk_path

  module procedure river_pcoll_read_block
    type(c_ptr) :: base
    integer(c_size_t) :: n
    integer(c_int) :: rc
    rc = river_f_records(buf, 0_c_size_t, pcoll_record_size_c(pcoll%ptr), &
                         c_str('river_pcoll_read_block'), base)
    if (rc == RIVER_SUCCESS) &
      rc = river_pcoll_read_block_c(pcoll%ptr, int(p, c_int), block, base, &
                                    bufsize, n)
    if (rc == RIVER_SUCCESS) nrecords = n
    call river_check(rc, 'river_pcoll_read_block', ierr)
  end procedure river_pcoll_read_block

  module procedure river_pcoll_blocks
    integer(c_size_t) :: rpb
    integer(c_int64_t) :: nb
    integer(c_int) :: rc
    rc = river_pcoll_blocks_c(pcoll%ptr, int(p, c_int), rpb, nb)
    if (rc == RIVER_SUCCESS) then
      records_per_block = rpb
      nblocks = nb
    end if
    call river_check(rc, 'river_pcoll_blocks', ierr)
  end procedure river_pcoll_blocks

  module procedure river_pcoll_verify_copy
    integer(c_int64_t) :: bad
    integer(c_int) :: rc
    rc = river_pcoll_verify_copy_c(pcoll%ptr, int(p, c_int), int(c, c_int), &
                                   bad)
    if (rc /= RIVER_SUCCESS .and. present(bad_block)) bad_block = bad
    call river_check(rc, 'river_pcoll_verify_copy', ierr)
  end procedure river_pcoll_verify_copy

  module procedure river_pcoll_verify_blocks
    integer(c_int8_t), allocatable :: flags(:)
    integer(c_size_t) :: rpb
    integer(c_int64_t) :: nb, n
    integer(c_int) :: rc
    rc = river_pcoll_blocks_c(pcoll%ptr, int(p, c_int), rpb, nb)
    if (rc == RIVER_SUCCESS) then
      allocate(flags(max(nb, 1_c_int64_t)))
      n = 0
      rc = river_pcoll_verify_blocks_c(pcoll%ptr, int(p, c_int), &
                                       int(c, c_int), flags, nb, n)
      if (rc /= RIVER_EINVAL .and. rc /= RIVER_ENOMEM) then
        bad = flags(1:nb) /= 0
        if (present(nbad)) nbad = n
      end if
    end if
    call river_check(rc, 'river_pcoll_verify_blocks', ierr)
  end procedure river_pcoll_verify_blocks

  module procedure river_pcoll_remove
    type(pcoll_opts_c) :: opts
    character(kind=c_char), allocatable, target :: root_c(:), disks_c(:)
    if (present(root)) call c_str_ptr(root, root_c, opts%root)
    if (present(disks)) call c_str_ptr(disks, disks_c, opts%disks)
    call river_check(river_pcoll_remove_c(c_str(name), opts), &
                     'river_pcoll_remove', ierr)
  end procedure river_pcoll_remove

  module procedure river_pcoll_remove_all
    type(pcoll_opts_c) :: opts
    character(kind=c_char), allocatable, target :: root_c(:), disks_c(:)
    if (present(root)) call c_str_ptr(root, root_c, opts%root)
    if (present(disks)) call c_str_ptr(disks, disks_c, opts%disks)
    call river_check(river_pcoll_remove_all_c(int(comm%MPI_VAL, c_int), &
                                              c_str(name), opts), &
                     'river_pcoll_remove_all', ierr)
  end procedure river_pcoll_remove_all

  module procedure river_pcoll_gc
    type(pcoll_opts_c) :: opts
    character(kind=c_char), allocatable, target :: root_c(:), disks_c(:)
    integer(c_int64_t) :: n, b
    integer(c_int) :: rc, mode
    if (present(root)) call c_str_ptr(root, root_c, opts%root)
    if (present(disks)) call c_str_ptr(disks, disks_c, opts%disks)
    mode = merge(1_c_int, 0_c_int, remove)
    if (present(force)) then
      if (force .and. remove) mode = 3_c_int   ! 1 | RIVER_PCOLL_GC_FORCE
    end if
    rc = river_pcoll_gc_c(opts, mode, c_null_funptr, c_null_ptr, n, b)
    if (rc == RIVER_SUCCESS) then
      nfiles = n
      nbytes = b
    end if
    call river_check(rc, 'river_pcoll_gc', ierr)
  end procedure river_pcoll_gc

  module procedure river_pcoll_purge
    type(pcoll_opts_c) :: opts
    character(kind=c_char), allocatable, target :: root_c(:), disks_c(:)
    integer(c_int64_t) :: n, b
    integer(c_int) :: rc
    if (present(root)) call c_str_ptr(root, root_c, opts%root)
    if (present(disks)) call c_str_ptr(disks, disks_c, opts%disks)
    rc = river_pcoll_purge_c(c_str(name), opts, c_null_funptr, c_null_ptr, &
                             n, b)
    if (rc == RIVER_SUCCESS) then
      nfiles = n
      nbytes = b
    end if
    call river_check(rc, 'river_pcoll_purge', ierr)
  end procedure river_pcoll_purge

  module procedure river_pcoll_check_name
    call river_check(river_pcoll_check_name_c(c_str(name)), &
                     'river_pcoll_check_name', ierr)
  end procedure river_pcoll_check_name

  module procedure river_pcoll_copy_disk
    integer(c_int) :: cdisk, rc
    rc = river_pcoll_copy_disk_c(pcoll%ptr, int(p, c_int), int(c, c_int), &
                                 cdisk)
    if (rc == RIVER_SUCCESS) disk = cdisk
    call river_check(rc, 'river_pcoll_copy_disk', ierr)
  end procedure river_pcoll_copy_disk

  module procedure river_pcoll_node_local
    integer(c_int) :: clocal, rc
    rc = river_pcoll_node_local_c(pcoll%ptr, clocal)
    if (rc == RIVER_SUCCESS) local = clocal /= 0
    call river_check(rc, 'river_pcoll_node_local', ierr)
  end procedure river_pcoll_node_local

  module procedure river_pcoll_disk_ranks
    type(river_pcoll_info) :: info
    integer(c_int), allocatable :: cranks(:)
    integer(c_int) :: rc
    integer :: n
    ! Every rank with a reader takes part in the collective, whatever the
    ! size of its ranks (a null handle is refused at once, as in C).
    n = 0
    if (river_pcoll_info_get_c(pcoll%ptr, info) == RIVER_SUCCESS) &
        n = info%ndisks
    allocate(cranks(max(n, 1)))
    rc = river_pcoll_disk_ranks_c(int(comm%MPI_VAL, c_int), pcoll%ptr, &
                                  cranks)
    if (rc == RIVER_SUCCESS .and. size(ranks) < n) rc = RIVER_EINVAL
    if (rc == RIVER_SUCCESS) ranks(1:n) = cranks(1:n)
    call river_check(rc, 'river_pcoll_disk_ranks', ierr)
  end procedure river_pcoll_disk_ranks

  ! ---------------------------------------------------------------- where

  module procedure river_pcoll_root
    type(pcoll_opts_c), target :: opts
    character(kind=c_char), allocatable, target :: root_c(:)
    integer(c_int) :: rc
    if (present(root)) call c_str_ptr(root, root_c, opts%root)
    call fetch_string(root_fill, c_loc(opts), 0_c_int, path, rc)
    call river_check(rc, 'river_pcoll_root', ierr)
  end procedure river_pcoll_root

  module procedure river_pcoll_disk_dir
    type(pcoll_opts_c), target :: opts
    character(kind=c_char), allocatable, target :: root_c(:), disks_c(:)
    integer(c_int) :: rc
    if (present(root)) call c_str_ptr(root, root_c, opts%root)
    if (present(disks)) call c_str_ptr(disks, disks_c, opts%disks)
    call fetch_string(disk_dir_fill, c_loc(opts), int(d, c_int), path, rc)
    call river_check(rc, 'river_pcoll_disk_dir', ierr)
  end procedure river_pcoll_disk_dir

  module procedure river_pcoll_list
    type(pcoll_opts_c), target :: opts
    character(kind=c_char), allocatable, target :: root_c(:)
    character(len=:), allocatable :: text
    integer(c_int) :: rc
    integer :: i, n, start, longest
    if (present(root)) call c_str_ptr(root, root_c, opts%root)
    call fetch_string(list_fill, c_loc(opts), 0_c_int, text, rc)
    if (rc == RIVER_SUCCESS) then
      ! text is the names, each followed by a newline.
      n = 0
      longest = 0
      start = 1
      do i = 1, len(text)
        if (text(i:i) /= new_line('a')) cycle
        n = n + 1
        longest = max(longest, i - start)
        start = i + 1
      end do
      allocate(character(len=longest) :: names(n))
      n = 0
      start = 1
      do i = 1, len(text)
        if (text(i:i) /= new_line('a')) cycle
        n = n + 1
        names(n) = text(start:i - 1)
        start = i + 1
      end do
    end if
    call river_check(rc, 'river_pcoll_list', ierr)
  end procedure river_pcoll_list

  ! --------------------------------------------------------------- layout

  module procedure river_pcoll_split
    integer(c_int64_t) :: f, s, n
    integer(c_int) :: rc
    rc = river_pcoll_split_c(int(layout, c_int), nrecords, &
                             int(npartitions, c_int), int(p, c_int), f, s, n)
    if (rc == RIVER_SUCCESS) then
      first = f
      stride = s
      count = n
    end if
    call river_check(rc, 'river_pcoll_split', ierr)
  end procedure river_pcoll_split

  module procedure river_pcoll_order_create
    type(river_pcoll_info) :: info
    type(c_ptr) :: out
    integer(c_int) :: rc
    ! The record size sizes the copying add and flush.
    rc = river_pcoll_info_get_c(pcoll%ptr, info)
    out = c_null_ptr
    if (rc == RIVER_SUCCESS) rc = river_pcoll_order_create_c(pcoll%ptr, out)
    if (rc == RIVER_SUCCESS) then
      order%ptr = out
      order%record_size = info%record_size
    end if
    call river_check(rc, 'river_pcoll_order_create', ierr)
  end procedure river_pcoll_order_create

  module procedure river_pcoll_order_add_ptr
    type(c_ptr) :: r
    integer(c_size_t) :: n
    integer(c_int) :: rc
    rc = river_pcoll_order_add_c(order%ptr, int(p, c_int), block, records, &
                                 nrecords, r, n)
    call order_result(rc, r, n, ready, nready)
    call river_check(rc, 'river_pcoll_order_add', ierr)
  end procedure river_pcoll_order_add_ptr

  module procedure river_pcoll_order_add_bytes
    type(c_ptr) :: in, r
    integer(c_size_t) :: n
    integer(c_int) :: rc
    ! c_loc needs an array of nonzero size; C accepts null for none.
    in = c_null_ptr
    r = c_null_ptr
    if (nrecords > 0) in = c_loc(records)
    rc = river_pcoll_order_add_c(order%ptr, int(p, c_int), block, in, &
                                 nrecords, r, n)
    if (rc /= RIVER_SUCCESS) n = 0
    nready = n
    ! Copied while records (maybe a temporary copy) still lives.
    call bytes_from(r, n * order%record_size, ready)
    call river_check(rc, 'river_pcoll_order_add', ierr)
  end procedure river_pcoll_order_add_bytes

  module procedure river_pcoll_order_flush_ptr
    type(c_ptr) :: r
    integer(c_size_t) :: n
    integer(c_int) :: rc
    rc = river_pcoll_order_flush_c(order%ptr, r, n)
    call order_result(rc, r, n, ready, nready)
    call river_check(rc, 'river_pcoll_order_flush', ierr)
  end procedure river_pcoll_order_flush_ptr

  module procedure river_pcoll_order_flush_bytes
    type(c_ptr) :: r
    integer(c_size_t) :: n
    integer(c_int) :: rc
    r = c_null_ptr
    rc = river_pcoll_order_flush_c(order%ptr, r, n)
    if (rc /= RIVER_SUCCESS) n = 0
    nready = n
    call bytes_from(r, n * order%record_size, ready)
    call river_check(rc, 'river_pcoll_order_flush', ierr)
  end procedure river_pcoll_order_flush_bytes

  module procedure river_pcoll_order_destroy
    integer(c_int) :: rc
    rc = river_pcoll_order_destroy_c(order%ptr)
    order%ptr = c_null_ptr
    order%record_size = 0
    call river_check(rc, 'river_pcoll_order_destroy', ierr)
  end procedure river_pcoll_order_destroy

end submodule river_pcoll_impl
