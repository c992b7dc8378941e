! river_dq.F90 - submodule river_dq_impl of module river: the distributed
! queue (river/dq.h). The handle type river_dq keeps the queue's c_ptr
! and its record size, which sizes the buffers of the copying gets;
! river_dq_create builds C's river_dq_opts (dq_opts_c) from its optional
! arguments. The four get variants (blocking or not, borrowed or copied)
! share dq_get_any, dq_get_ptr and dq_get_bytes, to which RIVER_EOS and
! RIVER_EAGAIN are statuses, never errors.
submodule (river) river_dq_impl
  implicit none

  ! C's river_dq_opts, built from river_dq_create's optional arguments.
  type, bind(C) :: dq_opts_c
    integer(c_int) :: policy = RIVER_DQ_PUSH
    integer(c_int) :: credits = 0
    integer(c_size_t) :: message_size = 0
    integer(c_int64_t) :: seed = 0
    type(c_funptr) :: partition = c_null_funptr
    type(c_ptr) :: partition_ctx = c_null_ptr
    real(c_double) :: pace = 0.0_c_double
  end type dq_opts_c

  ! dq_opts_c must be the size of C's river_dq_opts (see layout_ok in
  ! river).
  integer, parameter :: opts_layout_ok = 1 / merge(1, 0, &
      c_sizeof(dq_opts_c()) == RIVER__SIZEOF_DQ_OPTS)

  interface
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
      type(c_ptr), value :: records
      integer(c_size_t), value :: nrecords
      integer(c_int) :: river_dq_put_c
    end function river_dq_put_c
    function river_dq_try_put_c(q, records, nrecords) &
        bind(C, name='river_dq_try_put')
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: q
      type(c_ptr), value :: records
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
    function river_dq_try_reserve_c(q, buf, max) &
        bind(C, name='river_dq_try_reserve')
      import :: c_ptr, c_size_t, c_int
      type(c_ptr), value :: q
      type(c_ptr), intent(out) :: buf
      integer(c_size_t), intent(out) :: max
      integer(c_int) :: river_dq_try_reserve_c
    end function river_dq_try_reserve_c
    function river_dq_try_commit_c(q, n) bind(C, name='river_dq_try_commit')
      import :: c_ptr, c_size_t, c_int
      type(c_ptr), value :: q
      integer(c_size_t), value :: n
      integer(c_int) :: river_dq_try_commit_c
    end function river_dq_try_commit_c
    function river_dq_try_close_c(q) bind(C, name='river_dq_try_close')
      import :: c_ptr, c_int
      type(c_ptr), value :: q
      integer(c_int) :: river_dq_try_close_c
    end function river_dq_try_close_c
    function river_dq_try_end_unit_c(q) &
        bind(C, name='river_dq_try_end_unit')
      import :: c_ptr, c_int
      type(c_ptr), value :: q
      integer(c_int) :: river_dq_try_end_unit_c
    end function river_dq_try_end_unit_c
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
    function river_dq_set_tag_c(q, tag) bind(C, name='river_dq_set_tag')
      import :: c_int, c_int64_t, c_ptr
      type(c_ptr), value :: q
      integer(c_int64_t), value :: tag
      integer(c_int) :: river_dq_set_tag_c
    end function river_dq_set_tag_c
    function river_dq_tag_c(q, tag) bind(C, name='river_dq_tag')
      import :: c_int, c_int64_t, c_ptr
      type(c_ptr), value :: q
      integer(c_int64_t), intent(out) :: tag
      integer(c_int) :: river_dq_tag_c
    end function river_dq_tag_c
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
  end interface

contains

  ! For the try_ calls: RIVER_EAGAIN is a status (into ierr, if given,
  ! never a stop); any other code goes to river_check.
  subroutine again(rc, what, ierr)
    integer(c_int), intent(in) :: rc
    character(len=*), intent(in) :: what
    integer, optional, intent(out) :: ierr
    if (rc == RIVER_EAGAIN) then
      if (present(ierr)) ierr = RIVER_EAGAIN
      return
    end if
    call river_check(rc, what, ierr)
  end subroutine again

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

  module procedure river_dq_create
    type(dq_opts_c) :: opts
    type(c_ptr) :: out
    integer(c_int) :: rc
    if (present(policy)) opts%policy = int(policy, c_int)
    if (present(credits)) opts%credits = int(credits, c_int)
    if (present(message_size)) opts%message_size = message_size
    if (present(seed)) opts%seed = seed
    if (present(partition)) opts%partition = c_funloc(partition)
    if (present(partition_ctx)) opts%partition_ctx = partition_ctx
    if (present(pace)) opts%pace = real(pace, c_double)
    out = c_null_ptr
    rc = river_dq_create_c(int(comm%MPI_VAL, c_int), int(role, c_int), &
                           record_size, opts, out)
    if (rc == RIVER_SUCCESS) then
      q%ptr = out
      q%record_size = record_size
    end if
    call river_check(rc, 'river_dq_create', ierr)
  end procedure river_dq_create

  module procedure river_dq_put
    type(c_ptr) :: base
    integer(c_int) :: rc
    rc = river_f_records(records, nrecords, q%record_size, &
                         c_str('river_dq_put'), base)
    if (rc == RIVER_SUCCESS) rc = river_dq_put_c(q%ptr, base, nrecords)
    call river_check(rc, 'river_dq_put', ierr)
  end procedure river_dq_put

  module procedure river_dq_try_put
    type(c_ptr) :: base
    integer(c_int) :: rc
    rc = river_f_records(records, nrecords, q%record_size, &
                         c_str('river_dq_try_put'), base)
    if (rc == RIVER_SUCCESS) rc = river_dq_try_put_c(q%ptr, base, nrecords)
    if (rc == RIVER_EAGAIN) then
      if (present(ierr)) ierr = RIVER_EAGAIN
      return
    end if
    call river_check(rc, 'river_dq_try_put', ierr)
  end procedure river_dq_try_put

  module procedure river_dq_reserve
    call river_check(river_dq_reserve_c(q%ptr, buf, max), 'river_dq_reserve', &
                     ierr)
  end procedure river_dq_reserve

  module procedure river_dq_commit
    call river_check(river_dq_commit_c(q%ptr, n), 'river_dq_commit', ierr)
  end procedure river_dq_commit

  module procedure river_dq_close
    call river_check(river_dq_close_c(q%ptr), 'river_dq_close', ierr)
  end procedure river_dq_close

  module procedure river_dq_get_ptr
    call dq_get_ptr(q, .true., 'river_dq_get', records, nrecords, from, ierr)
  end procedure river_dq_get_ptr

  module procedure river_dq_get_bytes
    call dq_get_bytes(q, .true., 'river_dq_get', buf, nrecords, from, ierr)
  end procedure river_dq_get_bytes

  module procedure river_dq_try_get_ptr
    call dq_get_ptr(q, .false., 'river_dq_try_get', records, nrecords, &
                    from, ierr)
  end procedure river_dq_try_get_ptr

  module procedure river_dq_try_get_bytes
    call dq_get_bytes(q, .false., 'river_dq_try_get', buf, nrecords, from, &
                      ierr)
  end procedure river_dq_try_get_bytes

  module procedure river_dq_release
    call river_check(river_dq_release_c(q%ptr), 'river_dq_release', ierr)
  end procedure river_dq_release

  module procedure river_dq_end_unit
    call river_check(river_dq_end_unit_c(q%ptr), 'river_dq_end_unit', ierr)
  end procedure river_dq_end_unit

  ! RIVER_EAGAIN from the try_ forms below is a status, never a stop.
  module procedure river_dq_try_end_unit
    call again(river_dq_try_end_unit_c(q%ptr), 'river_dq_try_end_unit', ierr)
  end procedure river_dq_try_end_unit

  module procedure river_dq_try_close
    call again(river_dq_try_close_c(q%ptr), 'river_dq_try_close', ierr)
  end procedure river_dq_try_close

  module procedure river_dq_try_reserve
    integer(c_int) :: rc
    buf = c_null_ptr
    max = 0
    rc = river_dq_try_reserve_c(q%ptr, buf, max)
    if (rc /= RIVER_SUCCESS) buf = c_null_ptr
    call again(rc, 'river_dq_try_reserve', ierr)
  end procedure river_dq_try_reserve

  module procedure river_dq_try_commit
    call again(river_dq_try_commit_c(q%ptr, n), 'river_dq_try_commit', ierr)
  end procedure river_dq_try_commit

  module procedure river_dq_unit
    integer(c_int64_t) :: u
    integer(c_int) :: f, l, rc
    rc = river_dq_unit_c(q%ptr, u, f, l)
    if (rc == RIVER_SUCCESS) then
      unit = u
      if (present(first)) first = f /= 0
      if (present(last)) last = l /= 0
    end if
    call river_check(rc, 'river_dq_unit', ierr)
  end procedure river_dq_unit

  module procedure river_dq_set_tag
    call river_check(river_dq_set_tag_c(q%ptr, tag), 'river_dq_set_tag', &
                     ierr)
  end procedure river_dq_set_tag

  module procedure river_dq_tag
    integer(c_int64_t) :: t
    integer(c_int) :: rc
    rc = river_dq_tag_c(q%ptr, t)
    if (rc == RIVER_SUCCESS) tag = t
    call river_check(rc, 'river_dq_tag', ierr)
  end procedure river_dq_tag

  module procedure river_dq_stats_get
    type(river_dq_stats) :: s
    integer(c_int) :: rc
    rc = river_dq_stats_get_c(q%ptr, s)
    if (rc == RIVER_SUCCESS) stats = s
    call river_check(rc, 'river_dq_stats_get', ierr)
  end procedure river_dq_stats_get

  module procedure river_dq_destroy
    integer(c_int) :: rc
    rc = river_dq_destroy_c(q%ptr)
    q%ptr = c_null_ptr
    q%record_size = 0
    call river_check(rc, 'river_dq_destroy', ierr)
  end procedure river_dq_destroy

end submodule river_dq_impl
