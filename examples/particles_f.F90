! particles_f - a Fortran "scientific code" on River, at 4 ranks: ranks
! 0-1 compute particles, ranks 2-3 do the I/O.
!
!   flow 1   compute (this file's module, ranks 0-1) --push DQ-->
!            coll_write (built-in, ranks 2-3): collection 'particles',
!            one partition per I/O rank, each kept on both I/O disks
!   flow 2   coll_read (built-in, ranks 2-3, through graduated
!            declustering: both copies serve) --push DQ-->
!            check (this file's module, ranks 0-1)
!
! check compares every record read back with the particle computed from
! its id, and the ranks then agree that every id came back exactly once.
! The collection lives under a scratch root of its own (particles_f.data
! in the current directory) and is removed at the end. Any failure makes
! every rank exit non-zero: a River call without ierr stops the program
! with its message, and the flows' outcomes and the check are agreed.
!
!   mpirun -n 4 ./particles_f
module particle_modules
  use, intrinsic :: iso_c_binding
  use river
  implicit none

  ! A particle as a record: a bind(C) type laid out as PARTICLE_SCHEMA
  ! (56 bytes, no padding), so a message is simply an array of them.
  type, bind(C) :: particle
    integer(c_int64_t) :: id
    real(c_double) :: x, y, z       ! position
    real(c_double) :: vx, vy, vz    ! velocity
  end type particle
  character(len=*), parameter :: PARTICLE_SCHEMA = 'id:int64,' // &
      'x:float64,y:float64,z:float64,vx:float64,vy:float64,vz:float64;key=id'

  integer(c_int64_t), parameter :: NPARTICLES = 100000
  integer, allocatable :: seen(:)   ! check: how often each id came back
  integer :: wrong = 0              ! check: records that differ

contains

  ! The physics: particle id on a 50 x 50 x 40 lattice, drifting
  ! outward from the centre.
  pure function particle_of(id) result(p)
    integer(c_int64_t), intent(in) :: id
    type(particle) :: p
    p%id = id
    p%x = mod(id, 50_c_int64_t) + 0.5_c_double
    p%y = mod(id / 50, 50_c_int64_t) + 0.5_c_double
    p%z = id / 2500 + 0.5_c_double
    p%vx = (p%x - 25) / 10
    p%vy = (p%y - 25) / 10
    p%vz = (p%z - 20) / 10
  end function particle_of

  ! Module 'compute' (no inputs, one output): instance i of n computes
  ! its share of the `particles` ids and puts them 1000 at a time.
  integer(c_int) function compute(ctx) bind(C)
    type(c_ptr), value :: ctx
    type(particle) :: batch(1000)
    integer(c_int64_t) :: total, first, last, id, k, j
    integer :: me, n, rc

    call river_arg_uint(ctx, 'particles', total, rc)
    if (rc == RIVER_SUCCESS) call river_ctx_instance(ctx, me, n, rc)
    first = total * me / n                  ! ids first .. last-1
    last = total * (me + 1) / n
    id = first
    do while (rc == RIVER_SUCCESS .and. id < last)
      k = min(1000_c_int64_t, last - id)
      batch(1:k) = [(particle_of(id + j), j = 0, k - 1)]
      call river_put(ctx, 0, batch, int(k, c_size_t), rc)
      id = id + k
    end do
    compute = int(rc, c_int)   ! returning closes the output
  end function compute

  ! Module 'check' (one input, no outputs): compare each record with
  ! the particle computed from its id, and count the ids.
  integer(c_int) function check(ctx) bind(C)
    type(c_ptr), value :: ctx
    type(particle), pointer :: ps(:)
    type(c_ptr) :: msg
    integer(c_size_t) :: n, i
    integer :: rc
    do
      call river_get(ctx, 0, msg, n, rc)    ! the next n records
      if (rc /= RIVER_SUCCESS) exit
      call c_f_pointer(msg, ps, [n])
      do i = 1, n
        if (ps(i)%id < 0 .or. ps(i)%id >= NPARTICLES) then
          wrong = wrong + 1
        else
          seen(ps(i)%id) = seen(ps(i)%id) + 1
          if (.not. same(ps(i), particle_of(ps(i)%id))) wrong = wrong + 1
        end if
      end do
    end do
    if (rc == RIVER_EOS) rc = RIVER_SUCCESS   ! the end of the input
    check = int(rc, c_int)
  end function check

  ! Bit for bit: the same code computed both.
  logical function same(a, b)
    type(particle), intent(in) :: a, b
    same = a%x == b%x .and. a%y == b%y .and. a%z == b%z .and. &
           a%vx == b%vx .and. a%vy == b%vy .and. a%vz == b%vz
  end function same
end module particle_modules

program particles_f
  use, intrinsic :: iso_c_binding
  use, intrinsic :: iso_fortran_env, only: error_unit
  use mpi_f08
  use river
  use particle_modules
  implicit none

  character(len=*), parameter :: ROOT = 'particles_f.data'   ! scratch
  type(river_flow) :: flow
  type(river_stage_stats) :: st
  integer :: rank, nranks, ierr, bad
  logical :: ok

  call river_init(ierr)
  if (ierr /= RIVER_SUCCESS) error stop 1
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks)
  if (nranks /= 4) then
    if (rank == 0) write (error_unit, '(a)') 'particles_f: run on 4 ranks'
    error stop 2
  end if

  ! Every rank registers the modules (River calls them through
  ! c_funloc); a module without inputs is given its records' schema.
  call river_module_register('compute', compute, min_outputs=1, &
      max_outputs=1, args='schema:str,particles:uint')
  call river_module_register('check', check, min_inputs=1, max_inputs=1)

  ! Flow 1: compute on ranks 0-1 -> coll_write on ranks 2-3.
  call river_flow_create(MPI_COMM_WORLD, flow)
  call river_flow_place(flow, 'compute', 'compute', [0, 1])
  call river_flow_arg(flow, 'compute', 'schema', PARTICLE_SCHEMA)
  call river_flow_arg(flow, 'compute', 'particles', itoa(NPARTICLES))
  call river_flow_place(flow, 'write', 'coll_write', [2, 3])
  call river_flow_arg(flow, 'write', 'coll', 'particles')
  call river_flow_arg(flow, 'write', 'root', ROOT)
  call river_flow_arg(flow, 'write', 'mirror', '2')
  call river_flow_attach(flow, 'compute', 'write')   ! a push DQ
  call river_flow_go(flow, ierr)   ! ierr: the same outcome on every rank
  ok = ierr == RIVER_SUCCESS
  if (ok) then
    call river_flow_stage_stats(flow, 'write', st)
    if (rank == 0) write (*, '(a,i0,a,f6.1,a)') 'wrote ', st%records_in, &
        ' particles (', st%bytes_in / 1e6, ' MB)'
    ok = st%records_in == NPARTICLES
  end if
  call river_flow_destroy(flow)

  ! Flow 2: coll_read on ranks 2-3 -> check on ranks 0-1.
  allocate (seen(0:NPARTICLES - 1), source=0)
  if (ok) then
    call river_flow_create(MPI_COMM_WORLD, flow)
    call river_flow_place(flow, 'read', 'coll_read', [2, 3])
    call river_flow_arg(flow, 'read', 'coll', 'particles')
    call river_flow_arg(flow, 'read', 'root', ROOT)
    call river_flow_place(flow, 'check', 'check', [0, 1])
    call river_flow_attach(flow, 'read', 'check')
    call river_flow_go(flow, ierr)
    ok = ierr == RIVER_SUCCESS
    call river_flow_destroy(flow)
  end if

  ! Every id once, over both checkers; no record wrong.
  call MPI_Allreduce(MPI_IN_PLACE, seen, size(seen), MPI_INTEGER, MPI_SUM, &
                     MPI_COMM_WORLD)
  call MPI_Allreduce(wrong, bad, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (rank == 0) write (*, '(a,i0,a,i0,a,i0,a)') 'read back ', sum(seen), &
      ' particles: ', count(seen /= 1), ' ids not seen once, ', bad, ' wrong'
  ok = ok .and. all(seen == 1) .and. bad == 0

  ! Remove the collection (one rank does it), then the scratch root's
  ! disk directories, empty now.
  call MPI_Barrier(MPI_COMM_WORLD)
  if (rank == 0) then
    call river_pcoll_remove('particles', root=ROOT, ierr=ierr)
    if (ierr /= RIVER_SUCCESS .and. ierr /= RIVER_ENOTFOUND) ok = .false.
    call execute_command_line('rmdir ' // ROOT // '/disk* ' // ROOT, &
                              exitstat=ierr)
    if (ierr /= 0) ok = .false.
  end if
  call MPI_Allreduce(MPI_IN_PLACE, ok, 1, MPI_LOGICAL, MPI_LAND, &
                     MPI_COMM_WORLD)          ! fail together
  call river_finalize()
  if (.not. ok) then
    write (error_unit, '(a,i0,a)') 'particles_f: rank ', rank, ' failed'
    error stop 1
  end if

contains

  function itoa(i) result(s)
    integer(c_int64_t), intent(in) :: i
    character(len=:), allocatable :: s
    character(len=24) :: buf
    write (buf, '(i0)') i
    s = trim(buf)
  end function itoa
end program particles_f
